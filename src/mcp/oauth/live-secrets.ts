/**
 * The OAuth secrets this process holds right now (access and refresh tokens, client secrets), for whatever decides
 * what may leave the worker: the MCP redactor replaces each value by its label wherever it appears in a message,
 * an error or a log line (src/mcp/redaction.ts). Tokens change on every refresh, so they are read at redaction time
 * rather than captured once.
 */

export interface LiveSecret {
  value: string;
  /** What replaces it, e.g. `[oauth access token of crm]`. */
  label: string;
}

/** Anything that holds OAuth secrets of one server (the provider of src/mcp/oauth/provider.ts). */
export interface SecretHolder {
  liveSecrets(): LiveSecret[];
}

const holders = new Map<string, SecretHolder>();

/**
 * Register the holder of a server's secrets under its token-store key, replacing an earlier one of the same server.
 * Holders are never dropped: a token that was once live may still turn up in a late log line.
 */
export function registerSecretHolder(key: string, holder: SecretHolder): void {
  holders.set(key, holder);
}

/** Every OAuth secret value live in this process, with its label. */
export function liveOAuthSecrets(): LiveSecret[] {
  return [...holders.values()].flatMap((holder) => holder.liveSecrets());
}
