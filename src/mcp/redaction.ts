import type { McpServerConfig } from './config.js';
import { liveOAuthSecrets } from './oauth/live-secrets.js';

/**
 * Keeps a server's secrets out of everything that leaves src/mcp. Whatever the pool throws or reports ends up in
 * activity failures, turn results, stream events, the model's transcript and worker logs, and an error can quote
 * anything: the URL we connected to, an HTTP body that echoes our headers, the stderr of a server that printed its
 * key. So every value that came from the worker's environment or was written as a credential is replaced, wherever
 * it appears, before a message leaves: values expanded from `${VAR}` become `${VAR}` (the text as written), header
 * values become `[header <name>]`, the env values given to a stdio server become `[env <name>]`, and the OAuth tokens
 * and client secrets this process holds at the time (src/mcp/oauth/live-secrets.ts) become `[oauth ...]`.
 *
 * Tool results are not redacted: what a tool answers is the server's business, and a value such as `production`
 * given in `env` would otherwise vanish from every answer that mentions it.
 */

/** Values shorter than this are left alone: no secret is that short, and `1` or `on` would garble every message. */
export const MIN_REDACTED_LENGTH = 4;

interface Replacement {
  value: string;
  label: string;
}

export class Redactor {
  private readonly replacements: Replacement[];

  /** `live` is asked at each use for secrets that change (OAuth tokens). */
  constructor(
    secrets: Iterable<Replacement>,
    private readonly live: () => Iterable<Replacement> = () => [],
  ) {
    this.replacements = replacementsOf(secrets);
  }

  /** `text` with every secret replaced by its label. */
  text(text: string): string {
    let result = text;
    for (const { value, label } of this.current()) {
      if (result.includes(value)) result = result.split(value).join(label);
    }
    return result;
  }

  /**
   * `error` with the message and stack of it and of every cause redacted, in place (Temporal records a failure's
   * cause chain with messages and stack traces). Returns the same error, so `throw redactor.error(error)` works.
   */
  error<E>(error: E): E {
    const seen = new Set<unknown>();
    for (let current: unknown = error; typeof current === 'object' && current !== null && !seen.has(current);) {
      seen.add(current);
      const record = current as { message?: unknown; stack?: unknown; cause?: unknown };
      if (typeof record.message === 'string') record.message = this.text(record.message);
      if (typeof record.stack === 'string') record.stack = this.text(record.stack);
      current = record.cause;
    }
    return error;
  }

  private current(): Replacement[] {
    const live = [...this.live()];
    return live.length === 0 ? this.replacements : replacementsOf([...live, ...this.replacements]);
  }
}

function replacementsOf(secrets: Iterable<Replacement>): Replacement[] {
  const byValue = new Map<string, string>();
  for (const { value, label } of secrets) {
    // The same value can also appear encoded: in a URL (percent-encoding) or inside a JSON string.
    for (const form of new Set([
      value,
      encodeURIComponent(value),
      encodeURI(value),
      JSON.stringify(value).slice(1, -1),
    ])) {
      if (form.length >= MIN_REDACTED_LENGTH && !byValue.has(form)) byValue.set(form, label);
    }
  }
  // Longest first: a header value that contains an expanded variable goes as a whole.
  return [...byValue].map(([value, label]) => ({ value, label })).sort((a, b) => b.value.length - a.value.length);
}

/** The redactor of one server: its expanded variables, its header values (HTTP), its env values (stdio). */
export function redactorFor(config: McpServerConfig): Redactor {
  const secrets: Replacement[] = Object.entries(config.variables ?? {}).map(([name, value]) => ({
    value,
    label: `\${${name}}`,
  }));
  if (config.transport === 'http') {
    for (const [name, value] of Object.entries(config.headers)) secrets.push({ value, label: `[header ${name}]` });
    const { username, password } = parseUrl(config.url);
    if (password !== '') secrets.push({ value: password, label: '[password]' });
    if (username !== '') secrets.push({ value: username, label: '[user]' });
  } else {
    for (const [name, value] of Object.entries(config.env)) secrets.push({ value, label: `[env ${name}]` });
  }
  return new Redactor(secrets, liveOAuthSecrets);
}

/**
 * How an error message names the server's endpoint: the URL or command as written in the configuration (with its
 * `${VAR}`s unexpanded), never as expanded; credentials in a URL are left out even when written literally.
 */
export function endpointAsWritten(config: McpServerConfig): string {
  if (config.transport === 'stdio') return `"${config.commandAsWritten ?? config.command}"`;
  const written = config.urlAsWritten ?? config.url;
  const parsed = parseUrl(written);
  if (parsed.username === '' && parsed.password === '') return written;
  return written.replace(/^([a-z]+:\/\/)[^@/]*@/i, '$1');
}

function parseUrl(url: string): { username: string; password: string } {
  try {
    const parsed = new URL(url);
    return { username: decodeURIComponent(parsed.username), password: decodeURIComponent(parsed.password) };
  } catch {
    return { username: '', password: '' };
  }
}
