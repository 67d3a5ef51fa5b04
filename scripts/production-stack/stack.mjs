// The four commands of scripts/production-stack.mjs: up, status, kill, down.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import yaml from 'js-yaml';
import { ExitCode, StackError } from './errors.mjs';
import { choosePorts, isPortOpen } from './ports.mjs';
import * as postgresql from './postgres.mjs';
import { isOurProcess, killProcess, spawnDetached, stopProcess } from './processes.mjs';
import { LAYOUT, ROLES, TEMPORAL_SERVICES, acquireLock, pathsOf, readState, writeState } from './state.mjs';
import { serviceArgs, waitUntilServing, writeConfig } from './temporal.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SCHEMA_SCRIPT = path.join(root, 'scripts/temporal-schema.sh');
const NAMESPACE_SCRIPT = path.join(root, 'scripts/temporal-namespace.sh');
const log = (line) => process.stderr.write(`[production-stack] ${line}\n`);

/** The provisioning code of the package, compiled: the Temporal Server build and the `temporal` CLI. */
async function provisioning() {
  try {
    const build = await import('../../dist/temporal-servers/temporal-server-build.js');
    const servers = await import('../../dist/temporal-servers/index.js');
    // src/config.ts became src/config/index.ts on 2026-11-29; a build from before that has dist/config.js.
    const { loadConfig } = await import('../../dist/config/index.js').catch(() => import('../../dist/config.js'));
    return { ...build, ...servers, config: loadConfig() };
  } catch (error) {
    if (error.code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new StackError('durable-agent is not built: run `npm install` (or `npm run build`) in the clone first.');
  }
}

/** The dynamic config of docker-compose.yml's production server, the same file here. */
function composeDynamicConfig() {
  const compose = yaml.load(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'));
  return compose.configs['temporal-dynamic-config'].content;
}

function stackPostgres() {
  return { ...postgresql.findPostgres(), runUser: postgresql.postgresRunUser() };
}

/** [major, minor] of a version like 1.31.0. */
const minorOf = (version) => String(version).split('.').slice(0, 2).map(Number);

/**
 * Whether `--upgrade` may take a DIR from `recorded` to `version`: Temporal Server supports upgrading one minor version
 * at a time (each may need the schema versions of the one before), and never downgrading.
 */
function isUpgradeStep(recorded, version) {
  const [fromMajor, fromMinor] = minorOf(recorded);
  const [toMajor, toMinor] = minorOf(version);
  return fromMajor === toMajor && (toMinor === fromMinor || toMinor === fromMinor + 1) && recorded !== version;
}

/** `up` refuses a DIR that this script did not set up, or that another layout or server version did. */
function checkCompatible(paths, state, version, upgrade) {
  if (!state) {
    const entries = existsSync(paths.dir)
      ? readdirSync(paths.dir).filter((name) => !['logs', 'config', 'stack.lock'].includes(name))
      : [];
    if (entries.length > 0) {
      throw new StackError(
        `${paths.dir} is not empty and holds no production stack (no state.json): choose a new or empty DIR.`,
      );
    }
    return;
  }
  if (state.layout === LAYOUT && upgrade && isUpgradeStep(state.temporalServerVersion, version)) {
    log(`upgrading ${paths.dir} from Temporal Server ${state.temporalServerVersion} to ${version}`);
    return;
  }
  if (state.layout !== LAYOUT || state.temporalServerVersion !== version) {
    throw new StackError(
      `${paths.dir} was set up by another version of this script (layout ${state.layout}, Temporal Server ` +
        `${state.temporalServerVersion}); this one runs layout ${LAYOUT}, Temporal Server ${version}. Keep running it ` +
        'with the checkout that set it up, or upgrade it as docs/production.md ("Upgrading Temporal Server") says ' +
        '(`up DIR --upgrade`, one minor version at a time); a new DIR starts empty.',
    );
  }
}

function runScript(script, env, logFile) {
  const result = spawnSync('sh', [script], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 300_000 });
  writeFileSync(logFile, `${result.stdout ?? ''}${result.stderr ?? ''}`, { flag: 'a' });
  if (result.status !== 0) {
    const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim().split('\n').slice(-15).join('\n');
    throw new Error(
      `${path.basename(script)} failed (${result.error?.message ?? `exit ${result.status}`}); ${logFile}:\n${output}`,
    );
  }
}

function withPath(directory) {
  return `${directory}${path.delimiter}${process.env.PATH ?? ''}`;
}

/** Starts one Temporal role and records its pid; `waitUntilServing` follows. */
function startRole(paths, state, role, server) {
  const pid = spawnDetached(server, serviceArgs(paths, role), { cwd: paths.dir, logFile: paths.logOf(role) });
  state.pids[role] = pid;
  writeState(paths, state);
  return pid;
}

async function waitForPortOf(paths, state, role) {
  const marker = paths.configOf(role);
  const deadline = Date.now() + 120_000;
  while (!(await isPortOpen(state.ports[role].grpc))) {
    if (!isOurProcess(state.pids[role], marker)) {
      throw new Error(`the ${role} process exited at start: ${lastError(paths.logOf(role))} (${paths.logOf(role)})`);
    }
    if (Date.now() > deadline) throw new Error(`${role} did not open its port within 120 s; see ${paths.logOf(role)}`);
    await sleep(100);
  }
}

async function serving(paths, state, role) {
  const marker = paths.configOf(role);
  try {
    await waitUntilServing(role, state.ports, { isRunning: () => isOurProcess(state.pids[role], marker) });
  } catch (error) {
    throw new Error(`${error.message}: ${lastError(paths.logOf(role))} (${paths.logOf(role)})`);
  }
}

/** The last error a Temporal process logged (its log is JSON lines), to say why it did not serve. */
function lastError(logFile) {
  const lines = existsSync(logFile) ? readFileSync(logFile, 'utf8').trim().split('\n').reverse() : [];
  for (const line of lines) {
    if (!/"level":"(error|fatal)"|^Unable to/.test(line)) continue;
    if (line.startsWith('Unable to')) return line.slice(0, 400);
    try {
      const { msg, error } = JSON.parse(line);
      return `${msg}${error ? `: ${error}` : ''}`.slice(0, 400);
    } catch {
      return line.slice(0, 400);
    }
  }
  return 'no error in its log';
}

/** Stops every process of the stack that runs: the Temporal roles (SIGTERM, then SIGKILL), then PostgreSQL. */
async function stopAll(paths, state, postgres) {
  const temporalRoles = Object.keys(TEMPORAL_SERVICES).reverse();
  await Promise.all(temporalRoles.map((role) => stopProcess(state.pids?.[role], paths.configOf(role))));
  if (postgresql.postmasterPid(paths) !== undefined) postgresql.stopCluster(postgres ?? stackPostgres(), paths, 'fast');
  state.pids = {};
  if (existsSync(paths.state)) writeState(paths, state);
}

function liveRoles(paths, state) {
  return ROLES.filter((role) => rolePid(paths, state, role) !== undefined);
}

function rolePid(paths, state, role) {
  if (role === 'postgres') {
    const pid = postgresql.postmasterPid(paths);
    return isOurProcess(pid, paths.postgresData) ? pid : undefined;
  }
  const pid = state?.pids?.[role];
  return isOurProcess(pid, paths.configOf(role)) ? pid : undefined;
}

export async function up(dir, { port, upgrade = false }) {
  const paths = pathsOf(dir);
  const existing = readState(paths);
  if (existing) {
    const live = liveRoles(paths, existing);
    if (live.length > 0) {
      throw new StackError(
        `The production stack in ${dir} is running already (${live.join(', ')}): use it (TEMPORAL_ADDRESS=127.0.0.1:` +
          `${existing.ports.frontend.grpc}), or stop it first with \`node scripts/production-stack.mjs down ${dir}\`.`,
      );
    }
  }
  const tools = await provisioning();
  checkCompatible(paths, existing, tools.TEMPORAL_SERVER_VERSION, upgrade);
  if (existing && port !== undefined && port !== existing.ports.frontend.grpc) {
    throw new StackError(
      `${dir} serves on port ${existing.ports.frontend.grpc}, fixed when it was set up; --port cannot change it.`,
    );
  }
  // Everything that can be missing is looked for before anything starts.
  const postgres = stackPostgres();
  if (existing && existing.postgresMajor !== postgres.major) {
    throw new StackError(
      `${dir} holds a PostgreSQL ${existing.postgresMajor} cluster and this machine runs PostgreSQL ${postgres.major}: ` +
        'run it with that version (POSTGRES_BIN_DIR), or move the data with pg_upgrade or pg_dump first.',
    );
  }
  const startedAt = Date.now();
  const build = await tools.ensureTemporalServer(tools.config);
  const cli = await tools.ensureDevServer(tools.config, { sdkDownload: false });

  for (const folder of [dir, paths.logs, paths.config]) mkdirSync(folder, { recursive: true });
  const release = acquireLock(paths);
  const state = existing ?? {
    layout: LAYOUT,
    temporalServerVersion: build.version,
    postgresMajor: postgres.major,
    postgres: { password: randomBytes(18).toString('base64url') },
    pids: {},
  };
  // Interrupted (Ctrl-C, a CI timeout's SIGTERM), `up` stops what it started, as it does when a step fails.
  const interrupted = (signal) => {
    log(`${signal}: stopping what started`);
    void stopAll(paths, state, postgres).finally(() => {
      release();
      process.exit(signal === 'SIGINT' ? 130 : 143);
    });
  };
  process.once('SIGINT', interrupted).once('SIGTERM', interrupted);
  try {
    const firstUp = !existing;
    state.ports = await choosePorts(existing?.ports, {
      frontendPort: port,
      postgresPort: existing ? postgresql.clusterPort(paths) : undefined,
    });
    state.pids = {};
    writeState(paths, state);
    const database = { port: state.ports.postgres, password: state.postgres.password };
    try {
      if (postgresql.initCluster(postgres, paths, database))
        log(`created the PostgreSQL ${postgres.major} cluster in ${paths.postgresData}`);
      state.pids.postgres = postgresql.startCluster(postgres, paths);
      writeState(paths, state);
      log(`PostgreSQL serves on 127.0.0.1:${database.port}; setting up the schema (scripts/temporal-schema.sh)`);
      runScript(
        SCHEMA_SCRIPT,
        {
          SQL_HOST: '127.0.0.1',
          SQL_PORT: String(database.port),
          SQL_USER: postgresql.POSTGRES_USER,
          SQL_PASSWORD: database.password,
          TEMPORAL_SCHEMA_DIR: build.schemaDir,
          PATH: withPath(path.dirname(build.sqlTool)),
        },
        path.join(paths.logs, 'schema.log'),
      );
      writeFileSync(paths.dynamicConfig, composeDynamicConfig());
      const context = { ports: state.ports, postgres: database, dynamicConfigFile: paths.dynamicConfig };
      for (const role of Object.keys(TEMPORAL_SERVICES)) writeConfig(paths, role, context);
      // Each process writes the cluster's metadata row at start when it is missing: on a new database, processes
      // started together race for it and the losers exit. History opens its port only once the row is written. The
      // frontend asks matching for its Nexus endpoints at start and exits when no matching has joined yet, so
      // matching goes second; the frontend and the internal worker then start together.
      for (const role of ['history', 'matching']) {
        startRole(paths, state, role, build.server);
        await waitForPortOf(paths, state, role);
      }
      for (const role of ['frontend', 'internal-worker']) startRole(paths, state, role, build.server);
      log(`started ${Object.keys(TEMPORAL_SERVICES).join(', ')}; waiting until each serves`);
      await Promise.all(Object.keys(TEMPORAL_SERVICES).map((role) => serving(paths, state, role)));
      const address = `127.0.0.1:${state.ports.frontend.grpc}`;
      log('registering the namespace and search attributes (scripts/temporal-namespace.sh)');
      runScript(
        NAMESPACE_SCRIPT,
        { TEMPORAL_ADDRESS: address, PATH: withPath(path.dirname(cli)) },
        path.join(paths.logs, 'namespace.log'),
      );
      // Recorded only now: an upgrade that failed half-way is tried again by the next `up --upgrade`.
      state.temporalServerVersion = build.version;
      writeState(paths, state);
      const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
      console.log(
        `Temporal Server ${build.version} (${firstUp ? 'new' : 'existing'} data) runs in ${dir}; up in ${seconds} s.`,
      );
      console.log(`Web UI: not part of this stack; logs in ${paths.logs}; \`status ${dir}\` lists the processes.`);
      console.log(`TEMPORAL_ADDRESS=${address}`);
    } catch (error) {
      log(`stopping what started, because: ${error.message.split('\n')[0]}`);
      await stopAll(paths, state, postgres);
      throw error;
    }
  } finally {
    process.off('SIGINT', interrupted).off('SIGTERM', interrupted);
    release();
  }
}

/** DIR's paths and recorded state, or the usage error that says how to set a stack up there. */
function existingStack(dir) {
  const paths = pathsOf(dir);
  const state = readState(paths);
  if (!state) {
    throw new StackError(
      `${dir} holds no production stack (no state.json): \`up ${dir}\` sets one up.`,
      ExitCode.Usage,
    );
  }
  return { paths, state };
}

export async function status(dir) {
  const { paths, state } = existingStack(dir);
  let allRunning = true;
  for (const role of ROLES) {
    const pid = rolePid(paths, state, role) ?? null;
    if (pid === null) allRunning = false;
    const line = { role, pid, running: pid !== null };
    if (role === 'postgres') {
      line.port = state.ports.postgres;
      line.url = postgresql.databaseUrl({ port: state.ports.postgres, password: state.postgres.password });
      line.visibilityUrl = postgresql.databaseUrl(
        { port: state.ports.postgres, password: state.postgres.password },
        'temporal_visibility',
      );
    } else {
      line.ports = state.ports[role];
      line.service = TEMPORAL_SERVICES[role];
      if (role === 'frontend') line.address = `127.0.0.1:${state.ports.frontend.grpc}`;
    }
    line.log = paths.logOf(role);
    console.log(JSON.stringify(line));
  }
  return allRunning ? ExitCode.Ok : ExitCode.NotRunning;
}

export async function kill(dir, role) {
  const { paths, state } = existingStack(dir);
  const release = acquireLock(paths);
  try {
    const killed = rolePid(paths, state, role);
    if (liveRoles(paths, state).length === 0) {
      throw new StackError(`The production stack in ${dir} is not running: \`up ${dir}\` starts it.`);
    }
    // A role that died by itself is only started again (`killed` is null then).
    const startedAt = Date.now();
    if (role === 'postgres') {
      const postgres = stackPostgres();
      if (killed !== undefined) postgresql.stopCluster(postgres, paths, 'immediate');
      state.pids.postgres = postgresql.startCluster(postgres, paths);
      writeState(paths, state);
    } else {
      const tools = await provisioning();
      const { server } = await tools.ensureTemporalServer(tools.config);
      if (killed !== undefined) await killProcess(killed, paths.configOf(role));
      startRole(paths, state, role, server);
      await serving(paths, state, role);
    }
    const line = { role, killed: killed ?? null, pid: state.pids[role], servingAfterMs: Date.now() - startedAt };
    console.log(JSON.stringify(line));
  } finally {
    release();
  }
}

export async function down(dir) {
  const paths = pathsOf(dir);
  const state = readState(paths);
  if (!state)
    throw new StackError(`${dir} holds no production stack (no state.json): nothing to stop.`, ExitCode.Usage);
  const release = acquireLock(paths);
  try {
    const live = liveRoles(paths, state);
    await stopAll(paths, state);
    console.log(live.length > 0 ? `stopped ${live.join(', ')} in ${dir}` : `nothing was running in ${dir}`);
  } finally {
    release();
  }
}
