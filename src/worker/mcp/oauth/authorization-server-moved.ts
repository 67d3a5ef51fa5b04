import type { FetchLike, OAuthDiscoveryState } from '@modelcontextprotocol/client';

/**
 * Whether an MCP server's resource metadata (RFC 9728) no longer names the authorization server of the stored
 * discovery: the server moved to another one, and a login (client, tokens) from the old one is of no use there. Read
 * when the server answers 401, from the challenge's `resource_metadata` or the stored discovery's URL. Unknown (the
 * metadata cannot be read) counts as not moved: the stored discovery is used, as in an outage.
 */
export async function authorizationServerMoved(
  stored: OAuthDiscoveryState | undefined,
  challenged: URL | undefined,
  fetch: FetchLike,
): Promise<boolean> {
  const metadataUrl = challenged?.href ?? stored?.resourceMetadataUrl;
  if (stored === undefined || metadataUrl === undefined) return false;
  try {
    const response = await fetch(metadataUrl, { headers: { accept: 'application/json' } });
    if (!response.ok) return false;
    const { authorization_servers: named } = (await response.json()) as { authorization_servers?: unknown };
    if (!Array.isArray(named)) return false;
    return !named.some((url) => typeof url === 'string' && sameUrl(url, stored.authorizationServerUrl));
  } catch {
    return false;
  }
}

function sameUrl(a: string, b: string): boolean {
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return a === b;
  }
}
