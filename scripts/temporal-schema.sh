#!/bin/sh
# Creates Temporal's two PostgreSQL databases and sets up or updates their schema with temporal-sql-tool. One script for
# both production setups: docker-compose.yml's temporal-schema job runs it in the temporalio/admin-tools image, and
# scripts/production-stack.mjs runs it with the temporal-sql-tool it built, so the compose file runs the commands the
# native stack has run.
#
# Environment (temporal-sql-tool reads the SQL_* variables itself):
#   SQL_HOST, SQL_PORT, SQL_USER, SQL_PASSWORD   the PostgreSQL server and a user that may create databases
#   TEMPORAL_SCHEMA_DIR                          the server's schema/ folder (default: the admin-tools image's)
#
# Idempotent: a database that exists is kept, setup-schema -v 0.0 only creates the version tables, and update-schema
# applies only the versions that are missing, which is also how an upgrade of Temporal Server brings the schema along.
set -eu
: "${SQL_HOST:?SQL_HOST names the PostgreSQL host}" "${SQL_PORT:?}" "${SQL_USER:?}" "${SQL_PASSWORD:?}"
schema_dir="${TEMPORAL_SCHEMA_DIR:-/etc/temporal/schema}/postgresql/v12"
export SQL_PLUGIN=postgres12
for database in temporal temporal_visibility; do
  schema=temporal
  [ "$database" = temporal_visibility ] && schema=visibility
  # `create` fails when the database exists; any other failure shows up in the next command, which needs it.
  temporal-sql-tool --db "$database" create-database >/dev/null 2>&1 || true
  temporal-sql-tool --db "$database" setup-schema -v 0.0
  temporal-sql-tool --db "$database" update-schema -d "$schema_dir/$schema/versioned"
done
