import {
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  type FetchLike,
  type OAuthDiscoveryState,
  type OAuthProtectedResourceMetadata,
} from '@modelcontextprotocol/client';

/**
 * Where the SDK's discovery starts when the provider has none stored, with one exception to its issuer check.
 *
 * RFC 8414 §3.3 has a client use authorization-server metadata only if its `issuer` is the URL the metadata was looked
 * up under: that keeps a server from passing itself off as another authorization server (a mix-up). The 2025-03-26
 * revision had no protected-resource metadata; the MCP server was its own authorization server, looked up at the root
 * of its origin, and servers built for it name issuers such as `<origin>/oauth`, which the check refuses. When the
 * server publishes no protected-resource metadata, so the metadata comes from the MCP server's own origin, an issuer on
 * that same origin is accepted: it names no party other than the one already trusted with the tokens. An issuer on
 * another origin, and any issuer found through protected-resource metadata, goes through the SDK's strict check.
 */
export async function startDiscovery(
  serverUrl: string,
  resourceMetadataUrl: string | undefined,
  fetchFn: FetchLike,
): Promise<OAuthDiscoveryState | undefined> {
  let resourceMetadata: OAuthProtectedResourceMetadata | undefined;
  try {
    resourceMetadata = await discoverOAuthProtectedResourceMetadata(serverUrl, { resourceMetadataUrl }, fetchFn);
  } catch (error) {
    // The SDK's own reading: a network failure is fatal, anything else means the server publishes none.
    if (error instanceof TypeError) throw error;
  }
  if (resourceMetadata !== undefined) {
    const authorizationServerUrl = resourceMetadata.authorization_servers?.[0];
    // The SDK looks the metadata up and checks its issuer strictly; it only skips finding this document again.
    return authorizationServerUrl === undefined
      ? undefined
      : { authorizationServerUrl, resourceMetadata, resourceMetadataUrl };
  }
  const origin = new URL(serverUrl).origin;
  const authorizationServerUrl = `${origin}/`;
  const metadata = await discoverAuthorizationServerMetadata(authorizationServerUrl, {
    fetchFn,
    skipIssuerValidation: true,
  });
  if (metadata === undefined || !sameOrigin(metadata.issuer, origin)) {
    // The SDK's discovery finds the same and refuses it (or goes on without metadata), as it would without this.
    return undefined;
  }
  return { authorizationServerUrl, authorizationServerMetadata: metadata };
}

function sameOrigin(url: string, origin: string): boolean {
  try {
    return new URL(url).origin === origin;
  } catch {
    return false;
  }
}
