import type { McpOAuthConfig } from './config.js';
import type { StoredAuthorization } from './token-store.js';

/** A secret an OAuth provider holds, and what replaces it in redacted text, e.g. `[oauth access token of MCP server crm]`. */
export interface HeldSecret {
  value: string;
  label: string;
}

/** Every secret of a server's OAuth config and login (they change on each refresh), with its label. */
export function heldSecrets(server: string, oauth: McpOAuthConfig, record: StoredAuthorization): HeldSecret[] {
  const of = `of MCP server ${server}`;
  const { tokens, client } = record;
  const identityProvider = oauth.identityProvider;
  const candidates: Array<[string | undefined, string]> = [
    [tokens?.access_token, 'access token'],
    [tokens?.refresh_token, 'refresh token'],
    [tokens?.id_token, 'id token'],
    [oauth.clientSecret ?? client?.client_secret, 'client secret'],
    [oauth.privateKey?.pem, 'private key'],
    [identityProvider?.clientSecret, 'identity provider client secret'],
    [
      identityProvider !== undefined && 'value' in identityProvider.idToken
        ? identityProvider.idToken.value
        : undefined,
      'id token',
    ],
  ];
  return candidates
    .filter((candidate): candidate is [string, string] => Boolean(candidate[0]))
    .map(([value, what]) => ({ value, label: `[oauth ${what} ${of}]` }));
}
