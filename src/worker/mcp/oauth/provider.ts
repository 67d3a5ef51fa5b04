import { randomUUID } from 'node:crypto';
import {
  computeScopeUnion,
  type CrossAppAccessProvider,
  createPrivateKeyJwtAuth,
  extractWWWAuthenticateParams,
  type AddClientAuthentication,
  type FetchLike,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type OAuthTokens,
} from '@modelcontextprotocol/client';
import { McpAuthorizationRequiredError, McpTransportError } from '../errors.js';
import { authorizationServerMoved } from './authorization-server-moved.js';
import { crossAppAccess } from './enterprise-managed.js';
import { heldSecrets } from './held-secrets.js';
import { startDiscovery } from './legacy-discovery.js';
import { newerAccessToken, refreshTokenOf, SharedRefreshes, withBearer } from './shared-refreshes.js';
import type { McpOAuthConfig } from './config.js';
import { tokenStoreKey, type McpTokenStore, type StoredAuthorization } from './token-store.js';

/**
 * The MCP SDK's `OAuthClientProvider` for one configured server: the SDK runs the protocol (`auth()` of
 * @modelcontextprotocol/client, called by `StreamableHTTPClientTransport` on 401 and on 403
 * `insufficient_scope`), and this class only answers its questions from the MCP config and the token store.
 *
 * - `client_credentials`: tokens live in memory; a new one is fetched whenever the server answers 401.
 * - `authorization_code` on the worker: tokens come from the store (`durable-agent mcp login`) and are refreshed by
 *   the SDK; when the SDK would have to send a person to the authorization page, this throws
 *   {@link McpAuthorizationRequiredError} instead.
 * - `authorization_code` in `durable-agent mcp login`: the SDK's authorization URL goes to `onAuthorizationUrl`.
 */

export interface OAuthTarget {
  name: string;
  url: string;
  oauth: McpOAuthConfig;
}

export type ProviderMode =
  { kind: 'worker' } | { kind: 'login'; redirectUrl: string; state: string; onAuthorizationUrl: (url: URL) => void };

export class McpOAuthProvider implements OAuthClientProvider {
  readonly key: string;
  /** The server's URL as the transport requests it (normalized). */
  private readonly serverUrl: string;
  private record: StoredAuthorization = {};
  private loaded: Promise<void> | undefined;
  private verifier: string | undefined;
  /** The scope of the server's last 401/403 challenge, which the SDK does not hand to client-credentials requests. */
  private challengedScope: string | undefined;
  /** One refresh per refresh token (see {@link observingFetch}). */
  private readonly refreshes = new SharedRefreshes();
  /** The SDK dropped the stored tokens (the authorization server refused the refresh token). */
  private loginLost = false;
  /** The server's last answer was 403 `insufficient_scope`: a new authorization now is a step-up, not a lost login. */
  private steppingUp = false;
  /** The authorization URL a login handed to the person (one per login). */
  private personSentTo: URL | undefined;
  /** Settles when the login hands the person its URL; `claimed` once a request has started the login's registration. */
  private readonly personHandedUrl = handOver();
  /** The access token a step-up found too narrow: a new connection reads the store until a new login replaces it. */
  private outgrownToken: string | undefined;
  /**
   * The server's last 401 came with resource metadata naming another authorization server than the stored discovery's:
   * the SDK discovers again instead of taking the stored one (and refreshing a token the old server issued).
   */
  private discoveryOutdated = false;
  /** The protected-resource metadata URL of the server's last 401, where discovery looks first. */
  private challengedMetadataUrl: string | undefined;
  /** `private_key_jwt`: signs a client assertion into each token request (RFC 7523). */
  readonly addClientAuthentication?: AddClientAuthentication;
  /** `enterprise_managed`: the SDK's jwt-bearer provider, fed grants by the identity provider. */
  private readonly crossAppAccess?: CrossAppAccessProvider;

  /** Secret values already handed to `onSecret`. */
  private readonly announced = new Set<string>();

  /**
   * `onSecret` receives every token and client secret this provider comes to hold, once each, as soon as it holds it,
   * so that the worker redacts it from everything it sends (`McpPool.addSecret`).
   */
  constructor(
    private readonly target: OAuthTarget,
    private readonly store: McpTokenStore,
    private readonly mode: ProviderMode = { kind: 'worker' },
    private readonly onSecret: (value: string, label: string) => void = () => undefined,
  ) {
    this.key = tokenStoreKey(target);
    this.serverUrl = new URL(target.url).href;
    const { clientId, privateKey } = target.oauth;
    if (privateKey !== undefined && clientId !== undefined) {
      this.addClientAuthentication = createPrivateKeyJwtAuth({
        issuer: clientId,
        subject: clientId,
        privateKey: privateKey.pem,
        alg: privateKey.algorithm,
      });
    }
    this.crossAppAccess = crossAppAccess(target, (value, label) => this.announce([{ value, label }]));
    this.announce();
  }

  /** A Client ID Metadata Document's URL: the client id at authorization servers that support them. */
  get clientMetadataUrl(): string | undefined {
    return this.oauth.clientMetadataUrl;
  }

  private get oauth(): McpOAuthConfig {
    return this.target.oauth;
  }

  private get interactive(): boolean {
    return this.oauth.grant === 'authorization_code';
  }

  get redirectUrl(): string | undefined {
    if (!this.interactive) return undefined;
    if (this.mode.kind === 'login') return this.mode.redirectUrl;
    // The worker never redirects; the SDK only needs to know that this client has a redirect URI.
    return this.record.redirectUrl ?? 'http://127.0.0.1/callback';
  }

  get clientMetadata(): OAuthClientMetadata {
    const redirect = this.redirectUrl;
    return {
      client_name: 'durable-agent',
      redirect_uris: redirect === undefined ? [] : [redirect],
      grant_types:
        this.crossAppAccess?.clientMetadata.grant_types ??
        (this.interactive ? ['authorization_code', 'refresh_token'] : ['client_credentials']),
      response_types: this.interactive ? ['code'] : [],
      token_endpoint_auth_method:
        this.oauth.privateKey !== undefined
          ? 'private_key_jwt'
          : this.oauth.clientSecret === undefined
            ? 'none'
            : 'client_secret_basic',
      scope: this.scope(),
    };
  }

  state(): string {
    // The worker never gets to use it: redirectToAuthorization throws first.
    return this.mode.kind === 'login' ? this.mode.state : randomUUID();
  }

  async clientInformation(context?: { issuer?: string }): Promise<OAuthClientInformationMixed | undefined> {
    const { clientId, clientSecret } = this.oauth;
    if (clientId !== undefined) {
      return { client_id: clientId, ...(clientSecret !== undefined && { client_secret: clientSecret }) };
    }
    await this.load();
    const registeredAt = (this.record.client as { issuer?: string } | undefined)?.issuer;
    if (registeredAt !== undefined && context?.issuer !== undefined && registeredAt !== context.issuer) {
      // A client (and its tokens) belongs to the authorization server that registered it, and is never shown to another.
      if (this.mode.kind === 'worker') {
        // Read the store again on the next connection: the login this asks for replaces it there.
        this.outgrownToken = this.record.tokens?.access_token;
        throw this.loginRequired(
          `it now names the authorization server ${context.issuer}, not ${registeredAt} that its stored login is from`,
        );
      }
      this.record = { ...this.record, client: undefined, tokens: undefined };
    }
    // Registering a client is the login's business, never a worker's.
    if (this.record.client === undefined && this.mode.kind === 'worker') throw this.loginRequired(this.missingLogin());
    if (this.record.client === undefined && this.mode.kind === 'login') {
      // Requests that meet the challenge together (`tools/list` and the session's event stream) would each register a
      // client; the person's code then belongs to one and is redeemed with another. The first registers, the others
      // wait for its authorization URL and go on with its client.
      if (this.personHandedUrl.claimed) await this.personHandedUrl.promise;
      this.personHandedUrl.claimed = true;
    }
    return this.record.client;
  }

  async saveClientInformation(information: OAuthClientInformationMixed): Promise<void> {
    if (this.oauth.clientId !== undefined) return; // the config's client; nothing to keep
    await this.update({ client: information });
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    await this.load();
    return this.record.tokens;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    this.loginLost = false;
    await this.update({ tokens });
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    await this.load();
    if (this.mode.kind === 'login') {
      // The server's challenge names the scope of the request that provoked it; a step-up the worker met earlier
      // (kept in the store) asks for more, and a login that forgot it would be refused again.
      const scope = computeScopeUnion(authorizationUrl.searchParams.get('scope') ?? undefined, this.record.scope);
      if (scope !== undefined) authorizationUrl.searchParams.set('scope', scope);
      if (this.personSentTo !== undefined) return;
      this.personSentTo = authorizationUrl;
      this.personHandedUrl.resolve();
      this.mode.onAuthorizationUrl(authorizationUrl);
      return;
    }
    if (this.steppingUp) {
      // A person must grant more: keep the scope the SDK asks for, so that `durable-agent mcp login` asks for it.
      const scope = computeScopeUnion(this.record.scope, authorizationUrl.searchParams.get('scope') ?? undefined);
      this.outgrownToken = this.record.tokens?.access_token;
      await this.update({ scope });
      throw this.loginRequired(
        `it asks for the scope "${scope ?? ''}", which the stored login was not granted; the next login asks for it`,
      );
    }
    // The SDK goes on to a new authorization when a refresh fails for any reason other than the authorization server
    // refusing it (which drops the tokens): an authorization server that is down or failing is no reason to call a
    // person, and the next attempt may refresh.
    if (this.record.tokens?.refresh_token !== undefined && !this.loginLost) {
      throw new McpTransportError(
        `MCP server "${this.target.name}": could not refresh its OAuth login (the authorization server did not ` +
          'answer or failed); the next attempt tries again',
        { server: this.target.name, requestSent: false },
      );
    }
    throw this.loginRequired(this.missingLogin());
  }

  saveCodeVerifier(codeVerifier: string): void {
    // A login hands the person one URL: requests that meet the challenge after it (the session's event stream, say)
    // start authorizations of their own, whose verifiers must not replace the one the person's code is bound to.
    if (this.mode.kind === 'login' && this.personSentTo !== undefined) return;
    this.verifier = codeVerifier;
  }

  codeVerifier(): string {
    if (this.verifier === undefined) throw new Error('No PKCE code verifier: the authorization was not started here.');
    return this.verifier;
  }

  prepareTokenRequest(challenged?: string): Promise<URLSearchParams | undefined> | URLSearchParams | undefined {
    if (this.interactive) return undefined; // the SDK's authorization-code exchange
    const scope = this.scope();
    if (this.crossAppAccess !== undefined) return this.crossAppAccess.prepareTokenRequest?.(challenged ?? scope);
    const params = new URLSearchParams({ grant_type: 'client_credentials' });
    if (scope !== undefined) params.set('scope', scope);
    return params;
  }

  saveAuthorizationServerUrl(url: string): void {
    void this.crossAppAccess?.saveAuthorizationServerUrl?.(url);
  }

  saveResourceUrl(url: string): void {
    void this.crossAppAccess?.saveResourceUrl?.(url);
  }

  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    this.discoveryOutdated = false;
    await this.update({ discovery: state });
  }

  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    await this.load();
    if (!this.discoveryOutdated && this.record.discovery !== undefined) return this.record.discovery;
    const started = await startDiscovery(this.serverUrl, this.challengedMetadataUrl, this.observingFetch());
    // Kept for the login's second leg, which checks the authorization server against it.
    if (started?.authorizationServerMetadata !== undefined) await this.saveDiscoveryState(started);
    return started;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    await this.load();
    const next = { ...this.record };
    if ((scope === 'all' || scope === 'tokens') && next.tokens !== undefined) {
      delete next.tokens;
      this.loginLost = true;
    }
    if (scope === 'all' || scope === 'client') delete next.client;
    if (scope === 'all' || scope === 'discovery') delete next.discovery;
    if (scope === 'verifier') this.verifier = undefined;
    this.record = next;
    await this.persist();
  }

  /** Start the login afresh: forget the stored tokens, and a registered client made for another redirect URI. */
  async beginLogin(redirectUrl: string): Promise<void> {
    await this.load();
    const client = this.record.client as { redirect_uris?: string[] } | undefined;
    const keepClient = client?.redirect_uris?.includes(redirectUrl) === true;
    const { scope } = this.record;
    this.record = { ...(keepClient && { client: this.record.client }), redirectUrl, ...(scope && { scope }) };
  }

  /** True when the worker has no login to use (authorization code only), looking in the store again if need be. */
  async needsLogin(): Promise<boolean> {
    if (!this.interactive) return false;
    if (this.outgrownToken !== undefined) {
      this.record = {};
      this.loaded = undefined;
      await this.load();
      if (this.record.tokens?.access_token !== this.outgrownToken) this.outgrownToken = undefined;
    }
    await this.load();
    if (this.record.tokens !== undefined) return false;
    // Read the store again: a login may have been stored since (the worker need not restart).
    this.loaded = undefined;
    await this.load();
    if (this.record.tokens === undefined) return true;
    this.loginLost = false; // a new login
    return false;
  }

  /**
   * The `fetch` of the transport (and so of the SDK's token requests). It notes the scope of the server's
   * `WWW-Authenticate` challenge (read with the SDK's own parser), so that a client-credentials token request asks for
   * it: step-up on 403 `insufficient_scope`. And it sends one refresh per refresh token (./shared-refreshes.ts).
   */
  observingFetch(base: FetchLike = fetch): FetchLike {
    return async (url, init) => {
      const refreshToken = refreshTokenOf(init);
      if (refreshToken !== undefined) return this.refreshes.once(refreshToken, () => base(url, init));
      let response = await base(url, init);
      if (String(url) === this.serverUrl) {
        if (response.status === 401) await this.load();
        // Sent with a token another call has since refreshed: sent again with that one rather than refreshed again.
        const current = response.status === 401 ? newerAccessToken(init, this.record.tokens?.access_token) : undefined;
        if (current !== undefined) response = await base(url, withBearer(init, current));
        const { scope, error, resourceMetadataUrl } = extractWWWAuthenticateParams(response);
        this.steppingUp = response.status === 403 && error === 'insufficient_scope';
        if (response.status === 401) {
          this.challengedMetadataUrl = resourceMetadataUrl?.href;
          this.discoveryOutdated = await authorizationServerMoved(this.record.discovery, resourceMetadataUrl, base);
        }
        if ((response.status === 401 || response.status === 403) && scope !== undefined) this.challengedScope = scope;
      }
      return response;
    };
  }

  /** The configured scopes, those of an earlier step-up and those of the server's last challenge, space-separated. */
  private scope(): string | undefined {
    const scopes = new Set([
      ...(this.oauth.scopes ?? []),
      ...(this.record.scope?.split(' ') ?? []),
      ...(this.challengedScope?.split(' ') ?? []),
    ]);
    scopes.delete('');
    return scopes.size === 0 ? undefined : [...scopes].join(' ');
  }

  private missingLogin(): string {
    return this.record.tokens === undefined && !this.loginLost
      ? 'no login is stored'
      : 'the stored login has expired and could not be refreshed';
  }

  private loginRequired(problem: string): McpAuthorizationRequiredError {
    return new McpAuthorizationRequiredError(this.target.name, problem);
  }

  /** Client-credentials state stays in memory; a login's is read from and written to the store. */
  private load(): Promise<void> {
    this.loaded ??= this.interactive
      ? this.store.load(this.key).then((stored) => {
          this.record = { ...stored, ...this.record };
          this.announce();
        })
      : Promise.resolve();
    return this.loaded;
  }

  private async update(change: Partial<StoredAuthorization>): Promise<void> {
    await this.load();
    this.record = { ...this.record, ...change };
    this.announce();
    await this.persist();
  }

  /** Hand every secret held now that was not handed yet to `onSecret`. */
  private announce(secrets = heldSecrets(this.target.name, this.oauth, this.record)): void {
    for (const { value, label } of secrets) {
      if (this.announced.has(value)) continue;
      this.announced.add(value);
      this.onSecret(value, label);
    }
  }

  private async persist(): Promise<void> {
    if (this.interactive) await this.store.save(this.key, this.record);
  }
}

/** A promise with its resolver, and whether a request has claimed the registration it waits for. */
function handOver(): { claimed: boolean; promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((settle) => (resolve = settle));
  return { claimed: false, promise, resolve };
}
