import { ConfigError } from './errors.js';

/** The shortest bearer token a server of this project accepts: the bridge's operator token, the codec server's. */
export const MIN_TOKEN_CHARS = 16;

/**
 * Refuse a token too short to resist guessing, naming where it is set (`DURABLE_AGENT_CODEC_TOKEN`) so the error
 * says what to change. Throws the given error type, a {@link ConfigError} by default (exit code 2).
 */
export function checkTokenLength(
  token: string,
  setting: string,
  makeError: (message: string) => Error = (message) => new ConfigError(message),
): void {
  if (token.length >= MIN_TOKEN_CHARS) return;
  throw makeError(
    `${setting} has ${token.length} characters; it needs at least ${MIN_TOKEN_CHARS} ` +
      '(generate one with `openssl rand -base64 32`).',
  );
}
