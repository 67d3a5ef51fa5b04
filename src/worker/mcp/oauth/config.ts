import { createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describeValue, errorMessage } from '../../../shared/errors.js';
import {
  parseIdentityProvider,
  type IdentityProviderConfig,
  type OAuthConfigContext,
} from './identity-provider-config.js';

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
 * (src/worker/mcp/oauth/provider.ts); this is only what the operator chooses.
 */

export type OAuthGrant = 'client_credentials' | 'authorization_code' | 'enterprise_managed';

export interface McpOAuthConfig {
  /**
   * `client_credentials`: the worker authorizes itself. `authorization_code`: a person logs in once.
   * `enterprise_managed`: the person's ID token from the enterprise identity provider is exchanged for a grant.
   */
  grant: OAuthGrant;
  /** A pre-registered client; without one, the client registers itself dynamically (RFC 7591). */
  clientId: string | undefined;
  /** The pre-registered client's secret (write it as `${VAR}`); none for a public client. */
  clientSecret: string | undefined;
  /** Scopes to ask for; default those the server names (its challenge, then its resource metadata). */
  scopes: string[] | undefined;
  /** Loopback port of `durable-agent mcp login`'s redirect; 0 (the default) picks a free one per login. */
  redirectPort: number;
  /**
   * `authorization_code`: the HTTPS URL of this client's metadata document (a Client ID Metadata Document), used as
   * the client id by authorization servers that support them; others get a dynamically registered client.
   */
  clientMetadataUrl: string | undefined;
  /** `client_credentials` with `private_key_jwt`: the key that signs the client's assertions, and its algorithm. */
  privateKey: ClientAssertionKey | undefined;
  /** `enterprise_managed`: the identity provider that exchanges the person's ID token (./identity-provider-config.ts). */
  identityProvider: IdentityProviderConfig | undefined;
}

export interface ClientAssertionKey {
  /** PEM text (PKCS #8), from `privateKey` (`${VAR}`) or the file `privateKeyFile`. */
  pem: string;
  /** JWS algorithm: `signingAlgorithm`, default the key's (RS256, ES256/384/512, EdDSA). */
  algorithm: string;
}

const OAUTH_KEYS = [
  'grant',
  'clientId',
  'clientSecret',
  'scopes',
  'redirectPort',
  'clientMetadataUrl',
  'privateKey',
  'privateKeyFile',
  'signingAlgorithm',
  'identityProvider',
];

const SIGNING_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

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
  if (grant !== 'client_credentials' && grant !== 'authorization_code' && grant !== 'enterprise_managed') {
    throw error(
      'oauth.grant',
      `expected "client_credentials" (the worker authorizes itself), "authorization_code" ` +
        `(a person logs in with \`durable-agent mcp login\`) or "enterprise_managed" (the person's ID token from ` +
        `the enterprise identity provider is exchanged), got ${describeValue(grant)}.`,
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
  if (object.clientSecret !== undefined && (object.privateKey ?? object.privateKeyFile) !== undefined) {
    throw error('oauth.privateKey', 'a client authenticates with a secret or a private key, not both.');
  }
  const privateKey = parsePrivateKey(object, context);
  if (grant === 'client_credentials' && (clientId === undefined || (clientSecret ?? privateKey) === undefined)) {
    throw error(
      'oauth',
      'the client_credentials grant needs a pre-registered client: set "clientId" and either "clientSecret" ' +
        '(as "${VAR}", expanded from the worker\'s environment) or "privateKey"/"privateKeyFile" (private_key_jwt).',
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
    clientMetadataUrl: parseClientMetadataUrl(object, text('clientMetadataUrl'), error),
    privateKey,
    identityProvider: parseIdentityProvider(object, context),
  };
}

function parseClientMetadataUrl(
  object: Record<string, unknown>,
  value: string | undefined,
  error: OAuthConfigContext['error'],
): string | undefined {
  if (value === undefined) return undefined;
  if (object.grant !== 'authorization_code') {
    throw error('oauth.clientMetadataUrl', 'only the authorization_code grant uses a client metadata document.');
  }
  if (object.clientId !== undefined) {
    throw error('oauth.clientMetadataUrl', 'the document\'s URL is the client id: remove "clientId".');
  }
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url?.protocol !== 'https:' || url.pathname === '/') {
    throw error(
      'oauth.clientMetadataUrl',
      `expected an https URL with a path, such as "https://agent.example.com/oauth/client.json", got "${value}".`,
    );
  }
  return url.href;
}

function parsePrivateKey(object: Record<string, unknown>, context: OAuthConfigContext): ClientAssertionKey | undefined {
  const { error, expand, resolvePath } = context;
  const { privateKey, privateKeyFile, signingAlgorithm } = object;
  if (privateKey === undefined && privateKeyFile === undefined) {
    if (signingAlgorithm !== undefined)
      throw error('oauth.signingAlgorithm', 'needs "privateKey" or "privateKeyFile".');
    return undefined;
  }
  const key = privateKey !== undefined ? 'oauth.privateKey' : 'oauth.privateKeyFile';
  if (privateKey !== undefined && privateKeyFile !== undefined) {
    throw error('oauth.privateKeyFile', 'give the key once: "privateKey" ("${VAR}") or "privateKeyFile", not both.');
  }
  if (object.grant !== 'client_credentials') throw error(key, 'only the client_credentials grant signs assertions.');
  const value = privateKey ?? privateKeyFile;
  if (typeof value !== 'string' || value.trim() === '') {
    throw error(key, `expected a non-empty string, got ${describeValue(value)}.`);
  }
  let pem: string;
  if (privateKey !== undefined) {
    pem = expand(value, key);
  } else {
    const file = resolvePath(expand(value, key));
    try {
      pem = readFileSync(file, 'utf8');
    } catch (readError) {
      throw error(key, `cannot read ${file}: ${errorMessage(readError)}.`);
    }
  }
  let keyObject: KeyObject;
  try {
    keyObject = createPrivateKey(pem);
  } catch {
    // Say what, never the value: it is a secret.
    throw error(key, 'is not a PEM private key (expected "-----BEGIN PRIVATE KEY-----" ..., PKCS #8).');
  }
  if (signingAlgorithm !== undefined && !SIGNING_ALGORITHMS.includes(signingAlgorithm as string)) {
    throw error(
      'oauth.signingAlgorithm',
      `expected one of ${SIGNING_ALGORITHMS.join(', ')}, got ${describeValue(signingAlgorithm)}.`,
    );
  }
  const algorithm = (signingAlgorithm as string | undefined) ?? algorithmOf(keyObject);
  if (algorithm === undefined) {
    throw error('oauth.signingAlgorithm', `cannot tell the algorithm of a ${keyObject.asymmetricKeyType} key: set it.`);
  }
  return { pem, algorithm };
}

function algorithmOf(key: KeyObject): string | undefined {
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  if (key.asymmetricKeyType === 'ed25519') return 'EdDSA';
  if (key.asymmetricKeyType !== 'ec') return undefined;
  const curve = key.asymmetricKeyDetails?.namedCurve;
  return { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' }[curve ?? ''];
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
