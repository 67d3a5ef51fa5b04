import { readFileSync } from 'node:fs';
import { describeValue, errorMessage } from '../../../shared/errors.js';

/**
 * `oauth.identityProvider` of the `enterprise_managed` grant (enterprise-managed authorization, also called cross-app
 * access): the enterprise identity provider that exchanges the person's ID token for an identity assertion
 * authorization grant (ID-JAG, RFC 8693 token exchange), which the MCP server's authorization server takes in the
 * jwt-bearer grant (RFC 7523).
 *
 * ```json
 * "identityProvider": {
 *   "issuer": "https://idp.example.com",
 *   "clientId": "agent-at-idp",
 *   "clientSecret": "${IDP_CLIENT_SECRET}",
 *   "idTokenFile": "/run/secrets/id-token"
 * }
 * ```
 */
export interface IdentityProviderConfig {
  /** Where the token exchange goes: the identity provider's issuer (its metadata names the endpoint) or the endpoint. */
  token: { issuer: string } | { endpoint: string };
  /** The client registered at the identity provider. */
  clientId: string;
  /** Its secret; none for a public client. */
  clientSecret: string | undefined;
  /** The person's ID token: the value of `idToken` (`${VAR}`), or `idTokenFile`, read again for every exchange. */
  idToken: { value: string } | { file: string };
}

/** How the server's parser reports a bad key, expands `${VAR}`s and resolves paths (src/worker/mcp/config.ts). */
export interface OAuthConfigContext {
  error: (key: string, problem: string) => Error;
  expand: (text: string, key: string) => string;
  /** A path as written in the file, resolved against the file's directory. */
  resolvePath: (text: string) => string;
}

const IDENTITY_PROVIDER_KEYS = ['issuer', 'tokenEndpoint', 'clientId', 'clientSecret', 'idToken', 'idTokenFile'];

/** Reads `oauth.identityProvider`; present exactly when the grant is `enterprise_managed`. */
export function parseIdentityProvider(
  object: Record<string, unknown>,
  context: OAuthConfigContext,
): IdentityProviderConfig | undefined {
  const { error, expand } = context;
  const value = object.identityProvider;
  if (object.grant !== 'enterprise_managed') {
    if (value !== undefined) throw error('oauth.identityProvider', 'only the enterprise_managed grant uses one.');
    return undefined;
  }
  if (object.clientId === undefined || object.clientSecret === undefined) {
    throw error(
      'oauth',
      "the enterprise_managed grant needs the client registered at the MCP server's authorization server: set " +
        '"clientId" and "clientSecret" (as "${VAR}").',
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw error(
      'oauth.identityProvider',
      'expected an object such as {"issuer": "https://idp.example.com", "clientId": "...", "idTokenFile": "..."}, ' +
        `got ${describeValue(value)}.`,
    );
  }
  const provider = value as Record<string, unknown>;
  for (const key of Object.keys(provider)) {
    if (!IDENTITY_PROVIDER_KEYS.includes(key)) {
      throw error(
        `oauth.identityProvider.${key}`,
        `unknown key; expected one of ${IDENTITY_PROVIDER_KEYS.map((known) => `"${known}"`).join(', ')}.`,
      );
    }
  }
  const text = (key: string) => {
    const item = provider[key];
    if (item === undefined) return undefined;
    if (typeof item !== 'string' || item.trim() === '') {
      throw error(`oauth.identityProvider.${key}`, `expected a non-empty string, got ${describeValue(item)}.`);
    }
    return expand(item, `oauth.identityProvider.${key}`);
  };
  const issuer = text('issuer');
  const endpoint = text('tokenEndpoint');
  if ((issuer === undefined) === (endpoint === undefined)) {
    throw error(
      'oauth.identityProvider',
      'give where the token exchange goes once: "issuer" (the endpoint is read from its metadata) or "tokenEndpoint".',
    );
  }
  const url = issuer ?? endpoint!;
  const urlKey = `oauth.identityProvider.${issuer === undefined ? 'tokenEndpoint' : 'issuer'}`;
  if (!isSecureUrl(url)) throw error(urlKey, `expected an https URL (http only on a loopback host), got "${url}".`);
  const clientId = text('clientId');
  if (clientId === undefined) throw error('oauth.identityProvider.clientId', 'the client at the identity provider.');
  return {
    token: issuer === undefined ? { endpoint: url } : { issuer: url },
    clientId,
    clientSecret: text('clientSecret'),
    idToken: parseIdToken(provider, text('idToken'), context),
  };
}

function parseIdToken(
  provider: Record<string, unknown>,
  value: string | undefined,
  { error, expand, resolvePath }: OAuthConfigContext,
): IdentityProviderConfig['idToken'] {
  const file = provider.idTokenFile;
  if ((value === undefined) === (file === undefined)) {
    throw error(
      'oauth.identityProvider.idToken',
      'give the person\'s ID token once: "idToken" (as "${VAR}") or "idTokenFile" (read again for every exchange).',
    );
  }
  if (value !== undefined) return { value };
  if (typeof file !== 'string' || file.trim() === '') {
    throw error('oauth.identityProvider.idTokenFile', `expected a non-empty string, got ${describeValue(file)}.`);
  }
  const path = resolvePath(expand(file, 'oauth.identityProvider.idTokenFile'));
  try {
    readFileSync(path, 'utf8');
  } catch (readError) {
    throw error('oauth.identityProvider.idTokenFile', `cannot read ${path}: ${errorMessage(readError)}.`);
  }
  return { file: path };
}

function isSecureUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (
      url.protocol === 'https:' ||
      (url.protocol === 'http:' && /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/.test(url.hostname))
    );
  } catch {
    return false;
  }
}
