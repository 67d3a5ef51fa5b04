import { createHash, randomUUID } from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { OAuthClientInformationMixed, OAuthDiscoveryState, OAuthTokens } from '@modelcontextprotocol/client';
import { DurableAgentError, errorMessage } from '../../../shared/errors.js';

/**
 * Where the worker keeps what `durable-agent mcp login` obtained: per server, the tokens, the dynamically registered
 * client and the discovery results. Only on the worker's side: nothing of it ever enters workflow history, events or
 * logs. Client-credentials tokens are not stored at all; the worker asks for new ones whenever it starts.
 */

export interface StoredAuthorization {
  tokens?: OAuthTokens;
  /** A client registered dynamically (RFC 7591); a pre-registered one comes from the MCP config instead. */
  client?: OAuthClientInformationMixed;
  discovery?: OAuthDiscoveryState;
  /** The redirect URI the login used (a registered client's must match on refresh with some servers). */
  redirectUrl?: string;
  /**
   * The scope the server asked for beyond the login's (403 `insufficient_scope` met by the worker), space-separated:
   * the next login asks for it besides what the server's challenge names.
   */
  scope?: string;
}

/** A pluggable store: a file per server by default ({@link FileTokenStore}), or a secret manager of your own. */
export interface McpTokenStore {
  /** What is stored under `key`, or undefined. */
  load(key: string): Promise<StoredAuthorization | undefined>;
  save(key: string, value: StoredAuthorization): Promise<void>;
  remove(key: string): Promise<void>;
  /** Where the store keeps its data, for messages (never a secret). */
  readonly description: string;
}

/** The token store's key of a server: its name and URL, so a server moved to another URL needs a new login. */
export function tokenStoreKey(server: { name: string; url: string }): string {
  const digest = createHash('sha256').update(`${server.name}\n${server.url}`).digest('hex').slice(0, 16);
  return `${server.name.replace(/[^A-Za-z0-9_.-]/g, '_')}-${digest}`;
}

/** `DURABLE_AGENT_TOKEN_DIR`, else `$XDG_CONFIG_HOME/durable-agent/mcp-tokens`, else `~/.config/durable-agent/mcp-tokens`. */
export function defaultTokenDirectory(env: Record<string, string | undefined> = process.env): string {
  const configured = env.DURABLE_AGENT_TOKEN_DIR;
  if (configured !== undefined && configured !== '') return path.resolve(configured);
  const configHome =
    env.XDG_CONFIG_HOME !== undefined && env.XDG_CONFIG_HOME !== ''
      ? env.XDG_CONFIG_HOME
      : path.join(os.homedir(), '.config');
  return path.join(configHome, 'durable-agent', 'mcp-tokens');
}

/** Reading or writing the token store failed (the message names the file, never its content). */
export class McpTokenStoreError extends DurableAgentError {}

/**
 * One JSON file per server in `directory` (created with mode 0700), each written with mode 0600 (readable by the
 * worker's user only) through a temporary file and a rename, so a reader never sees half a file.
 */
export class FileTokenStore implements McpTokenStore {
  readonly description: string;

  constructor(readonly directory: string = defaultTokenDirectory()) {
    this.description = `the token directory ${directory}`;
  }

  fileOf(key: string): string {
    return path.join(this.directory, `${key}.json`);
  }

  async load(key: string): Promise<StoredAuthorization | undefined> {
    let text: string;
    try {
      text = await readFile(this.fileOf(key), 'utf8');
    } catch (error) {
      if ((error as { code?: unknown }).code === 'ENOENT') return undefined;
      throw new McpTokenStoreError(`Cannot read ${this.fileOf(key)}: ${errorMessage(error)}`);
    }
    try {
      return JSON.parse(text) as StoredAuthorization;
    } catch {
      // Say where, never what: the file holds tokens.
      throw new McpTokenStoreError(`${this.fileOf(key)} is not valid JSON: delete it and log in again.`);
    }
  }

  async save(key: string, value: StoredAuthorization): Promise<void> {
    await mkdir(this.directory, { recursive: true, mode: 0o700 });
    const file = this.fileOf(key);
    const temporary = `${file}.${randomUUID()}.tmp`;
    try {
      await writeFile(temporary, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
      // The mode of writeFile is masked by the umask; say it once more so a generous umask cannot widen it.
      await chmod(temporary, 0o600);
      await rename(temporary, file);
    } catch (error) {
      await rm(temporary, { force: true });
      throw new McpTokenStoreError(`Cannot write ${file}: ${errorMessage(error)}`);
    }
  }

  async remove(key: string): Promise<void> {
    await rm(this.fileOf(key), { force: true });
  }
}

/** A store in memory, for tests and for programs that keep nothing on disk. */
export class MemoryTokenStore implements McpTokenStore {
  readonly description = 'the in-memory token store';
  private readonly values = new Map<string, StoredAuthorization>();

  load(key: string): Promise<StoredAuthorization | undefined> {
    const value = this.values.get(key);
    return Promise.resolve(value === undefined ? undefined : structuredClone(value));
  }

  save(key: string, value: StoredAuthorization): Promise<void> {
    this.values.set(key, structuredClone(value));
    return Promise.resolve();
  }

  remove(key: string): Promise<void> {
    this.values.delete(key);
    return Promise.resolve();
  }
}
