/**
 * What may leave the worker, decided in one place (docs/security.md, "What leaves the worker"). A {@link Redactor}
 * knows the worker's secrets and replaces them, wherever they appear, in whatever goes out: activity results and
 * failures (message, stack, details, causes), heartbeat details, streamed text, log lines and the CLI's error output.
 *
 * It knows two kinds of secret:
 * - values: the worker's secret-looking environment variables, the MCP servers' secrets (src/worker/mcp/redaction.ts: the
 *   `${VAR}`s and `env` values under secret-looking names or marked in `secrets`, header values, URL credentials and
 *   token-like query parameters, OAuth client secrets), the model client's API key, and tokens registered while the
 *   worker runs ({@link Redactor.add}); each is replaced by a label naming where it came from (`${OPENAI_API_KEY}`);
 * - shapes: credentials that are secret whatever their value: the value of an `Authorization`, `Proxy-Authorization`,
 *   `Cookie` or `Set-Cookie` header or of an API-key header, a `Bearer`/`Basic` credential, the user and password of
 *   a URL, and an OpenAI-style `sk-…` key.
 *
 * A value is a secret for what it is, never for where it came from: a path, a host or an id expanded from `${HOME}` is
 * none. A tool result or a model answer that contains a secret is redacted too; the arguments of a tool call the model
 * writes are not (src/worker/activities/calls/outbound.ts): they are what the tool receives.
 */

/** Values shorter than this are left alone: no secret is that short, and `1` or `on` would garble every message. */
export const MIN_REDACTED_LENGTH = 4;

/**
 * Environment variables are secrets by their name only from this length: `true`, `off` or `/tmp` under a name with
 * KEY in it are not worth garbling every message for.
 */
export const MIN_ENV_SECRET_LENGTH = 8;

/**
 * Whether a value found under a secret-looking name (or given as a key) is worth redacting: 8 characters or more, and
 * not a plain word or number (`disabled`, `production`, `86400000`), which would vanish from every message that uses
 * it. A local model server's placeholder key (`test`, `ollama`) is no secret either.
 */
export function looksSecret(value: string): boolean {
  const text = value.trim();
  if (text.length < MIN_ENV_SECRET_LENGTH) return false;
  return !/^(\d+|[A-Za-z]{1,15})$/.test(text);
}

/** Environment variable names that hold secrets: `OPENAI_API_KEY`, `GITHUB_TOKEN`, `DB_PASSWORD`, `AWS_SECRET_…`. */
export const SECRET_ENV_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE/i;
/** …except those naming a file or a place: the path of a key is no secret, and hiding it hides the mistake. */
const NOT_SECRET_ENV_NAME = /_(PATH|FILE|DIR|SOCK|URL|HOST|PORT|ID)$/i;

/** Whether a variable (or `env` key) of this name holds a secret: {@link SECRET_ENV_NAME}, but not a file or a place. */
export function isSecretName(name: string): boolean {
  return SECRET_ENV_NAME.test(name) && !NOT_SECRET_ENV_NAME.test(name);
}

/** A secret value and the label that replaces it. */
export interface Secret {
  value: string;
  label: string;
}

/** The label of a value no other label fits (a registered token). */
export const SECRET_LABEL = '[secret]';
/** What a credential recognised by its shape becomes. */
export const REDACTED = '[redacted]';

const CREDENTIAL_HEADER = String.raw`(?:proxy-)?authorization|(?:set-)?cookie|x-api-key|api-key|x-auth-token`;
/** A header line, `Authorization: Bearer x` (the value runs to the end of the line). */
const HEADER_LINE = new RegExp(String.raw`\b(${CREDENTIAL_HEADER})(\s*:[ \t]*)([^\r\n"']+)`, 'gi');
/**
 * A JSON or quoted key and value, `"authorization":"x"`, also in JSON inside a JSON string (`\"authorization\":\"x\"`).
 * A quoted key without a quoted value is a name (`key "headers.Authorization": not set`), not a header.
 */
const HEADER_QUOTED = new RegExp(String.raw`(\\*["'])(${CREDENTIAL_HEADER})\1(\s*:\s*)\1(.*?)\1`, 'gi');
/** A parameter, `cookie=x` or `api-key=x` (the value ends at whitespace, `&`, `;`, `,` or a quote). */
const HEADER_PARAMETER = new RegExp(String.raw`\b(${CREDENTIAL_HEADER})=([^\s&;,"']+)`, 'gi');
/** A credential in an HTTP authorization scheme: 8 characters or more, with a digit or a symbol (not a word of prose). */
const SCHEME_CREDENTIAL = /\b(Bearer|Basic)(\s+)((?=[A-Za-z\-._~+/]*[0-9\-._~+/=])[A-Za-z0-9\-._~+/]{8,}=*)/gi;
/** The user and password of a URL. */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/@:"'<>]+):([^\s/@"'<>]+)@/gi;
/** OpenAI-style API keys (`sk-…`, `sk-proj-…`). */
const API_KEY_SHAPE = /\bsk-[A-Za-z0-9_-]{20,}/g;
/**
 * A label this module wrote, a `${VAR}` as written, or a placeholder of help text (`Bearer <token>`): left as it is, so
 * redacting twice changes nothing and a message saying how to send a credential keeps saying it.
 */
const LABEL = /^\s*(\[[^\]]*\]|\$\{\w+\}|<[\w .-]+>)/;
/** The start of a credential whose end has not arrived yet (see {@link Redactor.releasable}). */
const OPEN_CREDENTIAL = new RegExp(
  String.raw`\b(?:(?:${CREDENTIAL_HEADER})["']?\s*(?:[:=][^\n"']*)?|(?:bearer|basic)\s*\S*|[a-z][a-z0-9+.-]*://\S*|sk-[\w-]*)$`,
  'i',
);
/** What every credential shape above contains: a header name, a scheme, `://` or `sk-`. */
const MAY_HOLD_CREDENTIAL = new RegExp(String.raw`${CREDENTIAL_HEADER}|bearer|basic|:\/\/|sk-`, 'i');
const HEADER_NAME = new RegExp(String.raw`^(?:${CREDENTIAL_HEADER})$`, 'i');

export class Redactor {
  private readonly byValue = new Map<string, string>();
  private readonly included: Redactor[] = [];
  private version = 0;
  private cached: { key: string; replacements: Secret[] } | undefined;

  constructor(secrets: Iterable<Secret> = []) {
    for (const { value, label } of secrets) this.add(value, label);
  }

  /**
   * Register a secret, e.g. an OAuth access token as it is issued: from now on it is replaced by `label` in
   * everything that leaves the worker. Values shorter than {@link MIN_REDACTED_LENGTH} are ignored.
   */
  add(value: string, label = SECRET_LABEL): this {
    // The same value can also appear encoded: in a URL (percent-encoding) or inside a JSON string.
    for (const form of new Set([
      value,
      encodeURIComponent(value),
      encodeURI(value),
      JSON.stringify(value).slice(1, -1),
    ])) {
      if (form.length >= MIN_REDACTED_LENGTH && !this.byValue.has(form)) {
        this.byValue.set(form, label);
        this.version++;
      }
    }
    return this;
  }

  /** Also redact whatever `other` knows, now and as it learns more (e.g. the MCP pool's secrets). */
  include(other: Redactor): this {
    if (other !== this && !this.included.includes(other)) this.included.push(other);
    this.version++;
    return this;
  }

  /** The variables of `env` whose names look secret ({@link SECRET_ENV_NAME}) and values too ({@link looksSecret}), labelled `${NAME}`. */
  addEnvironment(env: Record<string, string | undefined>): this {
    for (const [name, value] of Object.entries(env)) {
      if (value === undefined || !looksSecret(value)) continue;
      if (isSecretName(name)) this.add(value.trim(), `\${${name}}`);
    }
    return this;
  }

  /** `text` with every secret replaced by its label and every credential recognised by its shape by `[redacted]`. */
  text(text: string): string {
    return redactText(text, this.replacements());
  }

  /**
   * A copy of a plain JSON value with every string redacted as {@link text}, and the whole value of a credential
   * header (`{ authorization: '…' }`) replaced. Returns `value` itself when nothing changed.
   */
  value<T>(value: T): T {
    // The secrets are gathered once for the whole value, not once for each of its strings.
    return walk(value, undefined, this.replacements()) as T;
  }

  /**
   * `error` with the message, stack, details and data of it and of every cause redacted, in place (Temporal records a
   * failure's cause chain with messages, stack traces and details; a stack starts with the message as it was when
   * the error was made, so it is redacted on its own). Returns the same error, so `throw redactor.error(error)` works;
   * a thrown string or object comes back redacted as a copy.
   */
  error<E>(error: E): E {
    if (typeof error !== 'object' || error === null) return this.value(error);
    const seen = new Set<unknown>();
    for (let current: unknown = error; typeof current === 'object' && current !== null && !seen.has(current);) {
      seen.add(current);
      const record = current as {
        message?: unknown;
        stack?: unknown;
        cause?: unknown;
        details?: unknown;
        data?: unknown;
      };
      if (typeof record.message === 'string') record.message = this.text(record.message);
      if (typeof record.stack === 'string') record.stack = this.text(record.stack);
      if (Array.isArray(record.details)) record.details = this.value(record.details);
      // The MCP SDK's errors keep what the server answered (an HTTP body that may echo our headers) in `data`.
      if (record.data !== undefined) record.data = this.value(record.data);
      current = record.cause;
    }
    return error instanceof Error || !isPlainObject(error) ? error : this.value(error);
  }

  /**
   * How much of `redacted` (text already passed through {@link text}) can go out before more of it is known: all but a
   * tail that could be the start of a secret or of a credential whose end has not arrived. Streamed text holds that
   * tail back until the next piece shows what it is.
   */
  releasable(redacted: string): number {
    let held = 0;
    for (const { value } of this.replacements()) {
      for (let length = Math.min(value.length - 1, redacted.length); length > held; length--) {
        if (redacted.endsWith(value.slice(0, length))) {
          held = length;
          break;
        }
      }
    }
    const open = OPEN_CREDENTIAL.exec(redacted);
    const end = redacted.length - held;
    return open === null ? end : Math.min(end, open.index);
  }

  /** Every value this redactor and those it includes know, longest first (a header that contains a variable goes whole). */
  private replacements(): Secret[] {
    const key = this.cacheKey();
    if (this.cached?.key === key) return this.cached.replacements;
    const byValue = new Map<string, string>();
    this.collect(byValue, new Set());
    const replacements = [...byValue]
      .map(([value, label]) => ({ value, label }))
      .sort((a, b) => b.value.length - a.value.length);
    this.cached = { key, replacements };
    return replacements;
  }

  private cacheKey(seen = new Set<Redactor>()): string {
    seen.add(this);
    const parts = [String(this.version)];
    for (const other of this.included) if (!seen.has(other)) parts.push(other.cacheKey(seen));
    return parts.join('.');
  }

  private collect(into: Map<string, string>, seen: Set<Redactor>): void {
    seen.add(this);
    for (const [value, label] of this.byValue) if (!into.has(value)) into.set(value, label);
    for (const other of this.included) if (!seen.has(other)) other.collect(into, seen);
  }
}

/** `text` with the credentials recognised by their shape replaced by `[redacted]`. */
export function redactShapes(text: string): string {
  // Most text names no credential at all: one search instead of six replacements.
  if (!MAY_HOLD_CREDENTIAL.test(text)) return text;
  const keep = (value: string) => LABEL.test(value.replace(/^(bearer|basic)\s+/i, ''));
  return text
    .replace(HEADER_QUOTED, (match, quote: string, name: string, separator: string, value: string) =>
      keep(value) ? match : `${quote}${name}${quote}${separator}${quote}${REDACTED}${quote}`,
    )
    .replace(HEADER_LINE, (match, name: string, separator: string, value: string) =>
      keep(value) ? match : `${name}${separator}${REDACTED}`,
    )
    .replace(HEADER_PARAMETER, (match, name: string, value: string) => (keep(value) ? match : `${name}=${REDACTED}`))
    .replace(SCHEME_CREDENTIAL, (_match, scheme: string, space: string) => `${scheme}${space}${REDACTED}`)
    .replace(URL_CREDENTIALS, (match, scheme: string, user: string, password: string) =>
      LABEL.test(password) && LABEL.test(user) ? match : `${scheme}${REDACTED}@`,
    )
    .replace(API_KEY_SHAPE, REDACTED);
}

/** `text` with every secret of `replacements` replaced by its label, then {@link redactShapes}. */
function redactText(text: string, replacements: readonly Secret[]): string {
  let result = text;
  for (const { value, label } of replacements) {
    if (result.includes(value)) result = result.split(value).join(label);
  }
  return redactShapes(result);
}

function walk(value: unknown, key: string | undefined, replacements: readonly Secret[]): unknown {
  if (typeof value === 'string') {
    return key !== undefined && HEADER_NAME.test(key) && value !== '' && !LABEL.test(value)
      ? REDACTED
      : redactText(value, replacements);
  }
  if (Array.isArray(value)) {
    const items = value.map((item) => walk(item, undefined, replacements));
    return items.every((item, index) => item === value[index]) ? value : items;
  }
  if (!isPlainObject(value)) return value;
  let changed = false;
  const entries = Object.entries(value).map(([name, item]) => {
    const redacted = walk(item, name, replacements);
    if (redacted !== item) changed = true;
    return [name, redacted] as const;
  });
  return changed ? Object.fromEntries(entries) : value;
}

/** The secrets of a process: its secret-looking environment variables. */
export function environmentSecrets(env: Record<string, string | undefined> = process.env): Redactor {
  return new Redactor().addEnvironment(env);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}
