import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, describeValue, errorMessage } from '../../shared/errors.js';
import { matchesPattern } from '../../shared/tool-patterns.js';
import type { ApprovalPolicy } from '../../shared/approval-messages.js';
import { isApprovalPolicy } from '../../shared/approval-policy.js';
import { parseOAuthConfig, type McpOAuthConfig } from './oauth/config.js';
import { parseSecretNames } from './secret-names.js';

/**
 * The `mcpServers` configuration file, in the shape desktop MCP clients use:
 *
 * ```json
 * {
 *   "mcpServers": {
 *     "files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/data"] },
 *     "search": { "url": "https://search.example.com/mcp", "headers": { "Authorization": "Bearer ${SEARCH_TOKEN}" } }
 *   }
 * }
 * ```
 *
 * `${VAR}` is expanded from the worker's environment when the file is loaded, so secrets stay in the worker and never
 * enter workflow history (the workflow only ever sees tool names, schemas and annotations).
 */

/** Call timeout of a tool when its server sets no `timeoutMs`. */
export const DEFAULT_TOOL_TIMEOUT_MS = 60_000;
/** How long a tool call waits for a person to answer its server's questions (elicitation) when the server sets no `elicitationTimeoutMs`. */
export const DEFAULT_ELICITATION_TIMEOUT_MS = 10 * 60 * 1000;
/** Largest accepted `timeoutMs` (one day): anything longer belongs in a workflow, not a single tool call. */
export const MAX_TOOL_TIMEOUT_MS = 24 * 60 * 60 * 1000;
/**
 * The MCP revisions a server can be pinned to with `protocolVersion`: `2025-11-25` is the `initialize` session (a server
 * that knows only an older revision answers with that), `2026-07-28` the stateless revision. See docs/mcp.md,
 * "Protocol versions".
 */
export const MCP_PROTOCOL_VERSIONS = ['2025-11-25', '2026-07-28'] as const;
export type McpProtocolVersion = (typeof MCP_PROTOCOL_VERSIONS)[number];

interface CommonServerConfig {
  /** The key under `mcpServers`; it becomes the tool name prefix (`<name>__<tool>`). */
  name: string;
  /** Only these tools (names on the server; `*` matches any run of characters). Default: all tools. */
  allowTools: string[] | undefined;
  /** Never these tools (same patterns as `allowTools`); applied after `allowTools`. Default: none. */
  denyTools: string[];
  /** Timeout of one tool call in milliseconds. Default {@link DEFAULT_TOOL_TIMEOUT_MS}. */
  timeoutMs: number;
  /** A disabled server is neither started nor offered to the model. Default false. */
  disabled: boolean;
  /**
   * Which of its tools' calls wait for a person's approval (docs/approvals.md): `never` (the default), `always`,
   * `writes` (tools not annotated read-only), or a list of tool names (patterns as in `allowTools`).
   */
  requireApproval?: ApprovalPolicy;
  /** Tools that never wait for approval whatever `requireApproval` says (patterns as in `allowTools`). */
  approvalNotRequired?: string[];
  /**
   * How long one tool call may wait, in all, for a person to answer the server's questions (MCP elicitation), in
   * milliseconds; a question still unanswered then is answered `cancel`. Default {@link DEFAULT_ELICITATION_TIMEOUT_MS}.
   */
  elicitationTimeoutMs?: number;
  /**
   * The `${VAR}`s expanded in this entry, by name, with the values they had. The pool redacts those whose names look
   * secret or are listed in `secrets` (src/worker/mcp/redaction.ts). Absent when the config was built in code.
   */
  variables?: Record<string, string>;
  /** `${VAR}`s of this entry and keys of its `env` whose values are secrets whatever their names. Default: none. */
  secrets?: string[];
  /**
   * The MCP revision to speak to this server, whatever it offers. Default: `2025-11-25` for stdio servers, and for
   * HTTP servers 2026-07-28 when they offer it, else 2025-11-25 (src/worker/mcp/protocol-era.ts).
   */
  protocolVersion?: McpProtocolVersion;
  /**
   * Call the tools whose `execution.taskSupport` is `optional` as MCP tasks too (docs/mcp.md, "Tasks"). Default false:
   * only tools that require a task are called as one.
   */
  optionalTasks?: boolean;
}

/** A server the worker starts as a child process and talks to over stdin/stdout. */
export interface StdioServerConfig extends CommonServerConfig {
  transport: 'stdio';
  command: string;
  /** `command` as written in the file, before `${VAR}` expansion: what error messages quote. Default `command`. */
  commandAsWritten?: string;
  args: string[];
  /**
   * Extra environment of the child process. The child also inherits a few safe variables (PATH, HOME, USER, SHELL,
   * TERM, LOGNAME) but not the rest of the worker's environment: pass secrets explicitly as `"${VAR}"`.
   */
  env: Record<string, string>;
  /** Working directory; a relative path is resolved against the config file's directory. Default: the worker's. */
  cwd: string | undefined;
}

/** A server reached over MCP Streamable HTTP. */
export interface HttpServerConfig extends CommonServerConfig {
  transport: 'http';
  url: string;
  /** `url` as written in the file, before `${VAR}` expansion: what error messages quote. Default `url`. */
  urlAsWritten?: string;
  headers: Record<string, string>;
  /** OAuth authorization (src/worker/mcp/oauth/); absent for servers reached with static headers or none. */
  oauth?: McpOAuthConfig;
}

export type McpServerConfig = StdioServerConfig | HttpServerConfig;

export interface McpConfig {
  /** The file the configuration came from, for error messages; undefined when built in code. */
  file: string | undefined;
  /** Servers in file order (disabled ones included, marked `disabled`). */
  servers: McpServerConfig[];
}

type Env = Record<string, string | undefined>;

const SERVER_KEYS = {
  common: [
    'type',
    'allowTools',
    'denyTools',
    'timeoutMs',
    'disabled',
    'requireApproval',
    'approvalNotRequired',
    'elicitationTimeoutMs',
    'secrets',
    'protocolVersion',
    'optionalTasks',
  ],
  stdio: ['command', 'args', 'env', 'cwd'],
  http: ['url', 'headers', 'oauth'],
} as const;

/**
 * Read and validate an `mcpServers` file. An undefined path (no `DURABLE_AGENT_MCP_CONFIG`) means no servers.
 * Throws {@link McpConfigError} naming the file, the server, the key and what was expected.
 */
export function loadMcpConfig(file: string | undefined, env: Env = process.env): McpConfig {
  if (file === undefined) return { file: undefined, servers: [] };
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const reason = errorMessage(error);
    throw new McpConfigError(`Cannot read the MCP configuration file ${file}: ${reason}`);
  }
  return parseMcpConfig(text, file, env);
}

/** Parse the text of an `mcpServers` file; `file` is used in error messages and to resolve relative `cwd`. */
export function parseMcpConfig(text: string, file: string, env: Env = process.env): McpConfig {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    const reason = errorMessage(error);
    throw new McpConfigError(`${file}: not valid JSON (${reason}). Expected {"mcpServers": {"<name>": {...}}}.`);
  }
  if (!isPlainObject(document)) {
    throw new McpConfigError(
      `${file}: expected a JSON object with an "mcpServers" key, got ${describeValue(document)}.`,
    );
  }
  const unknownTopLevel = Object.keys(document).filter((key) => key !== 'mcpServers');
  if (unknownTopLevel.length > 0) {
    throw new McpConfigError(
      `${file}: unknown top-level key ${JSON.stringify(unknownTopLevel[0])}; the only key is "mcpServers".`,
    );
  }
  const servers = document.mcpServers;
  if (!isPlainObject(servers)) {
    throw new McpConfigError(
      `${file}: "mcpServers" must be an object of servers by name, got ${describeValue(servers)}.`,
    );
  }
  const baseDirectory = path.dirname(path.resolve(file));
  return {
    file,
    servers: Object.entries(servers).map(([name, value]) =>
      parseServer(new Where(file, name), value, env, baseDirectory),
    ),
  };
}

/** True when the server's `allowTools`/`denyTools` let the model see and call the tool (by its name on the server). */
export function isToolAllowed(server: Pick<McpServerConfig, 'allowTools' | 'denyTools'>, toolName: string): boolean {
  if (server.allowTools !== undefined && !server.allowTools.some((pattern) => matchesPattern(pattern, toolName))) {
    return false;
  }
  return !server.denyTools.some((pattern) => matchesPattern(pattern, toolName));
}

function parseServer(where: Where, value: unknown, env: Env, baseDirectory: string): McpServerConfig {
  if (where.server.trim() === '') throw where.error(undefined, 'server names must not be empty.');
  if (!isPlainObject(value)) {
    throw where.error(
      undefined,
      `expected an object with "command" (stdio) or "url" (HTTP), got ${describeValue(value)}.`,
    );
  }
  const transport = parseTransport(where, value);
  const known: readonly string[] = [...SERVER_KEYS.common, ...SERVER_KEYS[transport]];
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) {
      const hint =
        transport === 'stdio' && (SERVER_KEYS.http as readonly string[]).includes(key)
          ? ' ("url"/"headers" belong to HTTP servers, which have no "command")'
          : transport === 'http' && (SERVER_KEYS.stdio as readonly string[]).includes(key)
            ? ' ("command"/"args"/"env"/"cwd" belong to stdio servers, which have no "url")'
            : '';
      throw where.error(key, `unknown key${hint}; expected one of ${known.map((k) => `"${k}"`).join(', ')}.`);
    }
  }
  const common = {
    name: where.server,
    allowTools: optionalStringList(where, value, 'allowTools'),
    denyTools: optionalStringList(where, value, 'denyTools') ?? [],
    timeoutMs: parseTimeout(where, value.timeoutMs),
    disabled: optionalBoolean(where, value, 'disabled') ?? false,
    ...parseApproval(where, value),
    ...(value.elicitationTimeoutMs === undefined
      ? {}
      : { elicitationTimeoutMs: parseTimeout(where, value.elicitationTimeoutMs, 'elicitationTimeoutMs') }),
    ...(value.secrets === undefined
      ? {}
      : { secrets: parseSecretNames(value, (key, problem) => where.error(key, problem)) }),
    ...(value.protocolVersion === undefined
      ? {}
      : { protocolVersion: parseProtocolVersion(where, value.protocolVersion) }),
    ...(value.optionalTasks === undefined ? {} : { optionalTasks: optionalBoolean(where, value, 'optionalTasks') }),
  };
  const variables: Record<string, string> = {};
  const expand = (text: string, key: string) => expandVariables(text, env, where, key, variables);

  if (transport === 'stdio') {
    const command = requiredString(where, value, 'command');
    const args = (optionalStringList(where, value, 'args') ?? []).map((arg, index) => expand(arg, `args[${index}]`));
    const childEnv = mapValues(optionalStringRecord(where, value, 'env') ?? {}, (text, key) =>
      expand(text, `env.${key}`),
    );
    const cwdText = optionalString(where, value, 'cwd');
    return {
      ...common,
      transport,
      command: expand(command, 'command'),
      commandAsWritten: command,
      args,
      env: childEnv,
      cwd: cwdText === undefined ? undefined : path.resolve(baseDirectory, expand(cwdText, 'cwd')),
      variables,
    };
  }

  // Errors quote the text as written, not as expanded, so a secret in the URL never reaches a log.
  const urlText = requiredString(where, value, 'url');
  const url = expand(urlText, 'url');
  const notHttp = () => where.error('url', `expected an http:// or https:// URL, got ${JSON.stringify(urlText)}.`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw notHttp();
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw notHttp();
  const headers = mapValues(optionalStringRecord(where, value, 'headers') ?? {}, (text, key) =>
    expand(text, `headers.${key}`),
  );
  const oauth =
    value.oauth === undefined
      ? undefined
      : parseOAuthConfig(value.oauth, {
          error: (key, problem) => where.error(key, problem),
          expand,
          resolvePath: (text) => path.resolve(baseDirectory, text),
        });
  if (oauth !== undefined && Object.keys(headers).some((name) => name.toLowerCase() === 'authorization')) {
    throw where.error('headers.Authorization', 'conflicts with "oauth", which sends its own Authorization header.');
  }
  return { ...common, transport, url, urlAsWritten: urlText, headers, variables, ...(oauth && { oauth }) };
}

/** `requireApproval` and `approvalNotRequired`, only when given (a code-built config may leave both out). */
function parseApproval(
  where: Where,
  value: Record<string, unknown>,
): Pick<CommonServerConfig, 'requireApproval' | 'approvalNotRequired'> {
  const policy = value.requireApproval;
  if (policy !== undefined && !isApprovalPolicy(policy)) {
    throw where.error(
      'requireApproval',
      `expected "never", "always", "writes" or an array of tool names, got ${describeValue(policy)}. ` +
        'For tools that change or delete things, use "writes" or list them (docs/approvals.md).',
    );
  }
  const exempt = optionalStringList(where, value, 'approvalNotRequired');
  return {
    ...(policy !== undefined ? { requireApproval: policy } : {}),
    ...(exempt !== undefined ? { approvalNotRequired: exempt } : {}),
  };
}

function parseProtocolVersion(where: Where, value: unknown): McpProtocolVersion {
  const known: readonly unknown[] = MCP_PROTOCOL_VERSIONS;
  if (known.includes(value)) return value as McpProtocolVersion;
  throw where.error(
    'protocolVersion',
    `expected ${MCP_PROTOCOL_VERSIONS.map((version) => `"${version}"`).join(' or ')}, got ${describeValue(value)}. ` +
      'Leave it out to let durable-agent choose (docs/mcp.md, "Protocol versions").',
  );
}

function parseTransport(where: Where, value: Record<string, unknown>): 'stdio' | 'http' {
  const type = value.type;
  if (type !== undefined) {
    if (type === 'stdio') return 'stdio';
    // Clients spell Streamable HTTP differently; accept the common spellings.
    if (type === 'http' || type === 'streamable-http' || type === 'streamableHttp') return 'http';
    if (type === 'sse') {
      throw where.error('type', 'the deprecated HTTP+SSE transport is not supported; use a Streamable HTTP "url".');
    }
    throw where.error('type', `expected "stdio" or "http", got ${JSON.stringify(type)}.`);
  }
  const hasCommand = 'command' in value;
  const hasUrl = 'url' in value;
  if (hasCommand && hasUrl) {
    throw where.error(undefined, 'has both "command" (stdio) and "url" (HTTP); expected exactly one.');
  }
  if (!hasCommand && !hasUrl) {
    throw where.error(undefined, 'expected "command" (a stdio server to start) or "url" (a Streamable HTTP server).');
  }
  return hasCommand ? 'stdio' : 'http';
}

function parseTimeout(where: Where, value: unknown, key = 'timeoutMs'): number {
  if (value === undefined) return DEFAULT_TOOL_TIMEOUT_MS;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_TOOL_TIMEOUT_MS) {
    throw where.error(
      key,
      `expected a whole number of milliseconds from 1 to ${MAX_TOOL_TIMEOUT_MS}, got ${describeValue(value)}.`,
    );
  }
  return value;
}

/**
 * Expand `${VAR}` (an error when VAR is unset) and `${VAR:-fallback}` (fallback when VAR is unset or empty).
 * `$$` is a literal `$`, so a value can contain `${` without expansion.
 */
function expandVariables(text: string, env: Env, where: Where, key: string, expanded: Record<string, string>): string {
  return text.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}/g, (match, name: string, _, fallback) => {
    if (match === '$$') return '$';
    const value = env[name];
    if (fallback !== undefined && (value === undefined || value === '')) return fallback as string;
    if (value === undefined) {
      throw where.error(key, `environment variable ${name} is not set (referenced as \${${name}}).`);
    }
    expanded[name] = value;
    return value;
  });
}

// Reading the file's values: each error names the file, the server and the key.

/** A ConfigError, so the CLI reports it as one (exit code 2) like a bad environment variable. */
export class McpConfigError extends ConfigError {}

/** Where a value sits in the file, so every error says file, server and key. */
export class Where {
  constructor(
    readonly file: string,
    readonly server: string,
  ) {}

  error(key: string | undefined, problem: string): McpConfigError {
    const at = key === undefined ? '' : ` key "${key}"`;
    return new McpConfigError(`${this.file}: server "${this.server}"${at}: ${problem}`);
  }
}

export function requiredString(where: Where, object: Record<string, unknown>, key: string): string {
  const value = object[key];
  if (typeof value !== 'string' || value.trim() === '') {
    throw where.error(key, `expected a non-empty string, got ${describeValue(value)}.`);
  }
  return value;
}

export function optionalString(where: Where, object: Record<string, unknown>, key: string): string | undefined {
  return object[key] === undefined ? undefined : requiredString(where, object, key);
}

export function optionalBoolean(where: Where, object: Record<string, unknown>, key: string): boolean | undefined {
  const value = object[key];
  if (value === undefined || typeof value === 'boolean') return value;
  throw where.error(key, `expected true or false, got ${describeValue(value)}.`);
}

export function optionalStringList(where: Where, object: Record<string, unknown>, key: string): string[] | undefined {
  const value = object[key];
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw where.error(key, `expected an array of strings, got ${describeValue(value)}.`);
  }
  return value;
}

export function optionalStringRecord(
  where: Where,
  object: Record<string, unknown>,
  key: string,
): Record<string, string> | undefined {
  const value = object[key];
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) throw where.error(key, `expected an object of strings, got ${describeValue(value)}.`);
  for (const [name, item] of Object.entries(value)) {
    if (typeof item !== 'string') {
      throw where.error(`${key}.${name}`, `expected a string, got ${describeValue(item)}.`);
    }
  }
  return value as Record<string, string>;
}

export function mapValues(
  record: Record<string, string>,
  transform: (value: string, key: string) => string,
): Record<string, string> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, transform(value, key)]));
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
