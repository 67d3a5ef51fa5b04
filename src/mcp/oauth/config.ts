import { describeValue } from '../../shared/errors.js';

/**
 * The `oauth` key of an HTTP server in the `mcpServers` file:
 *
 * ```json
 * "crm": {
 *   "url": "https://crm.example.com/mcp",
 *   "oauth": { "grant": "client_credentials", "clientId": "agent", "clientSecret": "${CRM_CLIENT_SECRET}", "scopes": ["crm:read"] }
 * }
 * ```
 *
 * The protocol itself (discovery, resource indicators, PKCE, registration, refresh, step-up) is the MCP SDK's
 * (src/mcp/oauth/provider.ts); this is only what the operator chooses.
 */

export type OAuthGrant = 'client_credentials' | 'authorization_code';

export interface McpOAuthConfig {
  /** `client_credentials`: the worker authorizes itself. `authorization_code`: a person logs in once. */
  grant: OAuthGrant;
  /** A pre-registered client; without one, the client registers itself dynamically (RFC 7591). */
  clientId: string | undefined;
  /** The pre-registered client's secret (write it as `${VAR}`); none for a public client. */
  clientSecret: string | undefined;
  /** Scopes to ask for; default those the server names (its challenge, then its resource metadata). */
  scopes: string[] | undefined;
  /** Loopback port of `durable-agent mcp login`'s redirect; 0 (the default) picks a free one per login. */
  redirectPort: number;
}

const OAUTH_KEYS = ['grant', 'clientId', 'clientSecret', 'scopes', 'redirectPort'];

/** How the server's parser reports a bad key and expands `${VAR}`s (src/mcp/config.ts). */
export interface OAuthConfigContext {
  error: (key: string, problem: string) => Error;
  expand: (text: string, key: string) => string;
}

export function parseOAuthConfig(value: unknown, context: OAuthConfigContext): McpOAuthConfig {
  const { error, expand } = context;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw error(
      'oauth',
      `expected an object such as {"grant": "client_credentials", ...}, got ${describeValue(value)}.`,
    );
  }
  const object = value as Record<string, unknown>;
  for (const key of Object.keys(object)) {
    if (!OAUTH_KEYS.includes(key)) {
      throw error(`oauth.${key}`, `unknown key; expected one of ${OAUTH_KEYS.map((k) => `"${k}"`).join(', ')}.`);
    }
  }
  const grant = object.grant;
  if (grant !== 'client_credentials' && grant !== 'authorization_code') {
    throw error(
      'oauth.grant',
      `expected "client_credentials" (the worker authorizes itself) or "authorization_code" ` +
        `(a person logs in with \`durable-agent mcp login\`), got ${describeValue(grant)}.`,
    );
  }
  const text = (key: string) => {
    const item = object[key];
    if (item === undefined) return undefined;
    if (typeof item !== 'string' || item.trim() === '') {
      throw error(`oauth.${key}`, `expected a non-empty string, got ${describeValue(item)}.`);
    }
    return expand(item, `oauth.${key}`);
  };
  const clientId = text('clientId');
  const clientSecret = text('clientSecret');
  if (grant === 'client_credentials' && (clientId === undefined || clientSecret === undefined)) {
    throw error(
      'oauth',
      'the client_credentials grant needs a pre-registered client: set "clientId" and "clientSecret" ' +
        '(the secret as "${VAR}", expanded from the worker\'s environment).',
    );
  }
  if (clientSecret !== undefined && clientId === undefined) {
    throw error('oauth.clientSecret', 'a client secret needs its "clientId".');
  }
  return {
    grant,
    clientId,
    clientSecret,
    scopes: parseScopes(object.scopes, error),
    redirectPort: parsePort(object, error),
  };
}

function parseScopes(value: unknown, error: OAuthConfigContext['error']): string[] | undefined {
  if (value === undefined) return undefined;
  const valid =
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((item) => typeof item === 'string' && /^[!#-[\]-~]+$/.test(item));
  if (!valid) {
    throw error('oauth.scopes', `expected a non-empty array of scope names (no spaces), got ${describeValue(value)}.`);
  }
  return value as string[];
}

function parsePort(object: Record<string, unknown>, error: OAuthConfigContext['error']): number {
  const value = object.redirectPort;
  if (value === undefined) return 0;
  if (object.grant !== 'authorization_code') {
    throw error('oauth.redirectPort', 'only the authorization_code grant has a redirect.');
  }
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 65535) {
    throw error('oauth.redirectPort', `expected a port number from 0 to 65535, got ${describeValue(value)}.`);
  }
  return value;
}
