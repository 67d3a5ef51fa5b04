import { readFileSync } from 'node:fs';
import {
  CrossAppAccessProvider,
  discoverAndRequestJwtAuthGrant,
  requestJwtAuthorizationGrant,
  type FetchLike,
} from '@modelcontextprotocol/client';
import { errorMessage } from '../../../shared/errors.js';
import type { McpOAuthConfig } from './config.js';
import type { IdentityProviderConfig } from './identity-provider-config.js';

/**
 * Enterprise-managed authorization (the `enterprise_managed` grant): the SDK's `CrossAppAccessProvider` builds the
 * jwt-bearer token request (RFC 7523) at the MCP server's authorization server, and the grant it sends comes from the
 * configured identity provider, which exchanges the person's ID token for it (RFC 8693, an ID-JAG whose audience is
 * that authorization server and whose resource is the MCP server). A new grant is asked for at every token request:
 * grants live minutes, and an ID token read from a file may have been renewed meanwhile.
 */
export function crossAppAccess(
  target: { name: string; oauth: McpOAuthConfig },
  /** Receives every credential this comes to hold (the ID token, each grant), for redaction. */
  onSecret: (value: string, label: string) => void,
): CrossAppAccessProvider | undefined {
  const { identityProvider, clientId, clientSecret } = target.oauth;
  // The config's parser requires all three of the enterprise_managed grant.
  if (identityProvider === undefined || clientId === undefined || clientSecret === undefined) return undefined;
  const server = target.name;
  const of = `of MCP server ${server}`;
  return new CrossAppAccessProvider({
    clientId,
    clientSecret,
    clientName: 'durable-agent',
    assertion: async ({ authorizationServerUrl, resourceUrl, scope, fetchFn }) => {
      const idToken = readIdToken(server, identityProvider.idToken);
      onSecret(idToken, `[oauth id token ${of}]`);
      const request = {
        audience: authorizationServerUrl,
        resource: resourceUrl,
        idToken,
        clientId: identityProvider.clientId,
        clientSecret: identityProvider.clientSecret,
        scope,
        fetchFn: fetchFn satisfies FetchLike,
      };
      const { token } = identityProvider;
      const granted =
        'issuer' in token
          ? await discoverAndRequestJwtAuthGrant({ ...request, idpUrl: token.issuer })
          : await requestJwtAuthorizationGrant({ ...request, tokenEndpoint: token.endpoint });
      onSecret(granted.jwtAuthGrant, `[oauth identity assertion grant ${of}]`);
      return granted.jwtAuthGrant;
    },
  });
}

function readIdToken(server: string, idToken: IdentityProviderConfig['idToken']): string {
  if ('value' in idToken) return idToken.value;
  try {
    const text = readFileSync(idToken.file, 'utf8').trim();
    if (text !== '') return text;
    throw new Error('the file is empty');
  } catch (error) {
    throw new Error(
      `MCP server "${server}": cannot read the ID token of oauth.identityProvider.idTokenFile (${idToken.file}): ` +
        `${errorMessage(error)}.`,
    );
  }
}
