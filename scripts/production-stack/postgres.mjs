// PostgreSQL for the stack: the distribution's server with a cluster of its own in DIR/postgres/data, listening on
// 127.0.0.1 only (no Unix socket, whose path length DIR could exceed), password authentication for the `temporal`
// superuser. initdb and postgres refuse to run as root, so as root they run as the `postgres` system user.
import { spawnSync } from 'node:child_process';
import {
  chownSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
  appendFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { StackError, ExitCode } from './errors.mjs';

const USER = 'temporal';
const TOOLS = ['initdb', 'pg_ctl', 'postgres', 'pg_isready'];

const installHint =
  "Install the distribution's PostgreSQL server (Debian/Ubuntu: `apt-get install postgresql-15`, or any version 12 " +
  'or newer), or set POSTGRES_BIN_DIR to the folder that holds initdb, pg_ctl and postgres.';

/** The folder of initdb, pg_ctl and postgres: POSTGRES_BIN_DIR, Debian's layout (newest version), or PATH. */
export function findPostgres() {
  const candidates = [];
  if (process.env.POSTGRES_BIN_DIR) candidates.push(process.env.POSTGRES_BIN_DIR);
  else {
    const debian = '/usr/lib/postgresql';
    if (existsSync(debian)) {
      const versions = readdirSync(debian)
        .filter((name) => /^\d+$/.test(name))
        .sort((a, b) => Number(b) - Number(a));
      candidates.push(...versions.map((version) => path.join(debian, version, 'bin')));
    }
    candidates.push(...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean));
  }
  const binDir = candidates.find((dir) => TOOLS.every((tool) => existsSync(path.join(dir, tool))));
  if (!binDir) {
    const where = process.env.POSTGRES_BIN_DIR
      ? `in POSTGRES_BIN_DIR=${process.env.POSTGRES_BIN_DIR}`
      : 'on this machine';
    throw new StackError(
      `PostgreSQL's server (${TOOLS.join(', ')}) was not found ${where}. ${installHint}`,
      ExitCode.Unavailable,
    );
  }
  const version = spawnSync(path.join(binDir, 'postgres'), ['--version'], { encoding: 'utf8' }).stdout.trim();
  const major = /(\d+)(?:\.\d+)?/.exec(version.replace(/^[^\d]*/, ''))?.[1];
  return { binDir, version, major };
}

/** As root, the unprivileged user PostgreSQL runs as; otherwise the current user (undefined). */
export function postgresRunUser() {
  if (process.getuid?.() !== 0) return undefined;
  const user = process.env.POSTGRES_RUN_USER ?? 'postgres';
  const found = spawnSync('id', ['-u', user], { encoding: 'utf8' });
  if (found.status !== 0) {
    throw new StackError(
      `PostgreSQL refuses to run as root, and there is no \`${user}\` user to run it as: create one ` +
        `(\`useradd --system --home-dir /var/lib/postgresql ${user}\`), set POSTGRES_RUN_USER to another ` +
        'unprivileged user, or run this script as a non-root user.',
      ExitCode.Unavailable,
    );
  }
  const group = spawnSync('id', ['-g', user], { encoding: 'utf8' });
  return { name: user, uid: Number(found.stdout.trim()), gid: Number(group.stdout.trim()) };
}

/** Runs a PostgreSQL tool as the run user; throws with its output when it fails. */
function run(postgres, tool, args, { check = true, timeoutMs = 120_000 } = {}) {
  const executable = path.join(postgres.binDir, tool);
  const [command, commandArgs] = postgres.runUser
    ? ['runuser', ['-u', postgres.runUser.name, '--', executable, ...args]]
    : [executable, args];
  const result = spawnSync(command, commandArgs, { encoding: 'utf8', timeout: timeoutMs, cwd: os.tmpdir() });
  if (check && result.status !== 0) {
    const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim().slice(-2_000);
    throw new Error(
      `${tool} ${args.join(' ')} failed (${result.error?.message ?? `exit ${result.status}`}): ${output}`,
    );
  }
  return result;
}

function ownByRunUser(postgres, target) {
  if (postgres.runUser) chownSync(target, postgres.runUser.uid, postgres.runUser.gid);
}

/** Creates the cluster on the first `up`: initdb, then the settings of the stack appended to postgresql.conf. */
export function initCluster(postgres, paths, { port, password }) {
  if (existsSync(path.join(paths.postgresData, 'PG_VERSION'))) return false;
  mkdirSync(paths.postgres, { recursive: true, mode: 0o700 });
  ownByRunUser(postgres, paths.postgres);
  // The run user must reach DIR from /: a DIR under root's home (mode 700) cannot be used.
  const probe = postgres.runUser
    ? spawnSync('runuser', ['-u', postgres.runUser.name, '--', 'test', '-w', paths.postgres])
    : { status: 0 };
  if (probe.status !== 0) {
    throw new StackError(
      `PostgreSQL runs as the user ${postgres.runUser.name}, which cannot write ${paths.postgres}: choose a DIR that ` +
        'user can reach (every folder above it searchable by others, e.g. under /var/lib or /tmp), not one under a ' +
        'private home directory.',
    );
  }
  const passwordFile = path.join(paths.postgres, 'initial-password');
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  ownByRunUser(postgres, passwordFile);
  try {
    run(postgres, 'initdb', [
      '--pgdata',
      paths.postgresData,
      '--username',
      USER,
      '--pwfile',
      passwordFile,
      '--auth',
      'scram-sha-256',
      '--encoding',
      'UTF8',
      '--locale',
      'C',
    ]);
  } finally {
    rmSync(passwordFile, { force: true });
  }
  appendFileSync(
    path.join(paths.postgresData, 'postgresql.conf'),
    [
      '',
      '# durable-agent production stack (scripts/production-stack.mjs); see docs/production.md.',
      `port = ${port}`,
      "listen_addresses = '127.0.0.1'",
      "unix_socket_directories = ''",
      // Four Temporal processes with pools of up to 20 + 10 connections each, plus the tools.
      'max_connections = 200',
      'shared_buffers = 256MB',
      'log_min_messages = warning',
      '',
    ].join('\n'),
  );
  return true;
}

/** The port the cluster was set up with (postgresql.conf), so a later `up` uses the same one. */
export function clusterPort(paths) {
  const conf = readFileSync(path.join(paths.postgresData, 'postgresql.conf'), 'utf8');
  const ports = [...conf.matchAll(/^port = (\d+)/gm)];
  return ports.length > 0 ? Number(ports.at(-1)[1]) : undefined;
}

/** Starts the postmaster detached (pg_ctl waits until it accepts connections, crash recovery included). */
export function startCluster(postgres, paths) {
  const log = paths.logOf('postgres');
  if (!existsSync(log)) writeFileSync(log, '');
  ownByRunUser(postgres, log);
  run(postgres, 'pg_ctl', ['--pgdata', paths.postgresData, '--log', log, '--wait', '--timeout', '120', 'start']);
  return postmasterPid(paths);
}

/** `fast`: roll back sessions and stop cleanly; `immediate`: stop without a checkpoint, as a crash would. */
export function stopCluster(postgres, paths, mode = 'fast') {
  if (postmasterPid(paths) === undefined) return;
  run(postgres, 'pg_ctl', ['--pgdata', paths.postgresData, '--mode', mode, '--wait', 'stop'], { check: false });
}

/** The postmaster's pid from postmaster.pid, when it runs. */
export function postmasterPid(paths) {
  try {
    const pid = Number(readFileSync(path.join(paths.postgresData, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the cluster accepts connections on its port. */
export function isReady(postgres, port) {
  return run(postgres, 'pg_isready', ['--host', '127.0.0.1', '--port', String(port)], { check: false }).status === 0;
}

/** A libpq URL of one of Temporal's databases. */
export function databaseUrl({ port, password }, database = 'temporal') {
  return `postgresql://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

export const POSTGRES_USER = USER;
