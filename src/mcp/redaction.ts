import { Redactor, SECRET_ENV_NAME, type Secret } from '../shared/redaction.js';
import type { McpServerConfig } from './config.js';

export { MIN_REDACTED_LENGTH, Redactor } from '../shared/redaction.js';

/**
 * Keeps a server's secrets out of everything that leaves src/mcp. Whatever the pool throws or reports ends up in
 * activity failures, turn results, stream events, the model's transcript and worker logs, and an error can quote
 * anything: the URL we connected to, an HTTP body that echoes our headers, the stderr of a server that printed its
 * key. So every value that came from the worker's environment or was written as a credential is replaced, wherever
 * it appears, before a message leaves: values expanded from `${VAR}` become `${VAR}` (the text as written), header
 * values become `[header <name>]`, the env values given to a stdio server become `[env <name>]`.
 *
 * The pool redacts with the server's own secrets, so its messages say which server's value it was; the worker then
 * redacts everything that leaves it, tool results included, with all of its secrets (src/shared/redaction.ts).
 */

/** The redactor of one server: its expanded variables, its header values (HTTP), its env values (stdio). */
export function redactorFor(config: McpServerConfig): Redactor {
  const secrets: Secret[] = Object.entries(config.variables ?? {}).map(([name, value]) => ({
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
  return new Redactor(secrets);
}

/**
 * The secrets of one server that the worker redacts from everything it sends, tool results included: its expanded
 * variables, header values and URL credentials, and the env values whose names look secret (`API_KEY`, not `MODE`: a
 * value such as `production` would otherwise vanish from every answer that mentions it).
 */
export function workerSecretsFor(config: McpServerConfig): Redactor {
  const all = redactorFor(config);
  if (config.transport === 'http') return all;
  const redactor = new Redactor();
  for (const [name, value] of Object.entries(config.variables ?? {})) redactor.add(value, `\${${name}}`);
  for (const [name, value] of Object.entries(config.env)) {
    if (SECRET_ENV_NAME.test(name)) redactor.add(value, `[env ${name}]`);
  }
  return redactor;
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
