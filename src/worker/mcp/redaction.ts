import { isSecretName, looksSecret, Redactor } from '../../shared/redaction.js';
import type { McpServerConfig } from './config.js';

export { MIN_REDACTED_LENGTH, Redactor } from '../../shared/redaction.js';

/**
 * Keeps a server's secrets out of everything that leaves src/worker/mcp. Whatever the pool throws or reports ends up in
 * activity failures, turn results, stream events, the model's transcript and worker logs, and an error can quote
 * anything: the URL we connected to, an HTTP body that echoes our headers, the stderr of a server that printed its
 * key. So every secret of the server is replaced, wherever it appears, before a message leaves.
 *
 * A secret is a value that is one by what it is (docs/security.md, "What is a secret"), never every value that came
 * from the environment: `${REPO}` or `${HOME}/projects` is a path that the model and the server both need as it is,
 * and replacing it made every tool call fail. The secrets of a server are:
 * - a `${VAR}` or an `env` value under a secret-looking name (`GITHUB_TOKEN`, `API_KEY`; not `REPO_PATH`), when the
 *   value looks secret too, and whatever its name one marked in the entry's `secrets`;
 * - every header value, the user and password of its URL, a token-like query parameter (`?api_key=`), and the OAuth
 *   client secret.
 *
 * The pool redacts with the server's own secrets, so its messages say which server's value it was; the worker
 * includes them in everything it redacts, tool results included (src/shared/redaction.ts).
 */

/** Query parameters whose values are credentials: a secret-looking name, or a signature or an authorization code. */
const SECRET_QUERY_PARAMETER = /^(sig|signature|code)$/i;

/** The redactor of one server: its secrets, each labelled by where it came from. */
export function redactorFor(config: McpServerConfig): Redactor {
  const marked = new Set(config.secrets ?? []);
  const isSecret = (name: string, value: string) => marked.has(name) || (isSecretName(name) && looksSecret(value));
  const variables = Object.entries(config.variables ?? {});
  // A secret written as `${VAR}` is named by its variable, as the configuration names it.
  const labelOf = (value: string, label: string) => {
    const variable = variables.find(([, expanded]) => expanded === value);
    return variable === undefined ? label : `\${${variable[0]}}`;
  };
  const redactor = new Redactor();
  for (const [name, value] of variables) {
    if (isSecret(name, value)) redactor.add(value, `\${${name}}`);
  }
  if (config.transport === 'stdio') {
    for (const [name, value] of Object.entries(config.env)) {
      if (isSecret(name, value)) redactor.add(value, labelOf(value, `[env ${name}]`));
    }
    return redactor;
  }
  for (const [name, value] of Object.entries(config.headers)) redactor.add(value, `[header ${name}]`);
  const url = parseUrl(config.url);
  if (url !== undefined) {
    if (url.password !== '') redactor.add(decodeURIComponent(url.password), '[password]');
    if (url.username !== '') redactor.add(decodeURIComponent(url.username), '[user]');
    for (const [name, value] of url.searchParams) {
      if ((isSecretName(name) || SECRET_QUERY_PARAMETER.test(name)) && looksSecret(value)) {
        redactor.add(value, labelOf(value, `[query ${name}]`));
      }
    }
  }
  if (config.oauth?.clientSecret !== undefined)
    redactor.add(config.oauth.clientSecret, labelOf(config.oauth.clientSecret, '[oauth clientSecret]'));
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
  if (parsed === undefined || (parsed.username === '' && parsed.password === '')) return written;
  return written.replace(/^([a-z]+:\/\/)[^@/]*@/i, '$1');
}

function parseUrl(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}
