#!/bin/sh
# Registers the namespace and the search attributes durable-agent's workflows upsert (src/shared/search-attributes.ts;
# test/production-stack holds this list to it): the server must know them before the first turn. One script for both
# production setups: docker-compose.yml's temporal-namespace job runs it in the temporalio/admin-tools image, and
# scripts/production-stack.mjs runs it with the `temporal` CLI durable-agent provisions.
#
# Environment: TEMPORAL_ADDRESS (host:port of the frontend), TEMPORAL_NAMESPACE (default `default`),
# TEMPORAL_NAMESPACE_RETENTION (default 72h: how long a closed conversation's history stays readable).
#
# Idempotent, and it fails (non-zero) unless every attribute is registered in the end.
set -eu
: "${TEMPORAL_ADDRESS:?TEMPORAL_ADDRESS names the Temporal frontend, host:port}"
namespace="${TEMPORAL_NAMESPACE:-default}"
attributes='DurableAgentStatus=Keyword DurableAgentTurns=Int DurableAgentConversationId=Keyword DurableAgentTenant=Keyword'

# Two minutes for the cluster to come up; a job that waited forever would hide a server that never starts.
attempt=0
until temporal operator cluster health >/dev/null 2>&1; do
  attempt=$((attempt + 1))
  if [ "$attempt" -ge 60 ]; then
    echo "temporal-namespace: the Temporal frontend at $TEMPORAL_ADDRESS is not healthy after 120 s" >&2
    exit 1
  fi
  sleep 2
done

if ! temporal operator namespace describe -n "$namespace" >/dev/null 2>&1; then
  temporal operator namespace create -n "$namespace" --retention "${TEMPORAL_NAMESPACE_RETENTION:-72h}"
fi

# A namespace just created reaches every frontend's cache within seconds: retry until each attribute is listed.
attempt=0
for attribute in $attributes; do
  name="${attribute%=*}"
  until temporal operator search-attribute list -n "$namespace" | grep -q "^ *$name "; do
    attempt=$((attempt + 1))
    if [ "$attempt" -ge 30 ]; then
      echo "temporal-namespace: could not register search attribute $name in namespace $namespace" >&2
      exit 1
    fi
    temporal operator search-attribute create -n "$namespace" --name "$name" --type "${attribute#*=}" >/dev/null 2>&1 ||
      sleep 2
  done
done
echo "temporal-namespace: namespace $namespace has the search attributes $attributes"
