/** How long the answer to a refresh is shared with callers that sent the same refresh token. */
const REFRESH_SHARED_MS = 60_000;

/**
 * One refresh per refresh token: parallel calls that meet an expired token each make the SDK refresh, and an
 * authorization server that rotates refresh tokens takes a second use of the old one for theft and revokes the whole
 * login; the later ones get a copy of the first one's answer.
 */
export class SharedRefreshes {
  /** Refresh requests by refresh token, in flight or just answered. */
  private readonly pending = new Map<string, Promise<Response>>();

  async once(refreshToken: string, send: () => Promise<Response>): Promise<Response> {
    let pending = this.pending.get(refreshToken);
    if (pending === undefined) {
      pending = send();
      this.pending.set(refreshToken, pending);
      // A failed refresh may be tried again at once; a new token is shared long enough for every caller that read
      // the old refresh token before the first refresh ended.
      const forget = () => this.pending.delete(refreshToken);
      pending.then((response) => (response.ok ? setTimeout(forget, REFRESH_SHARED_MS).unref() : forget()), forget);
    }
    return (await pending).clone();
  }
}

/** The refresh token of a token request (`grant_type=refresh_token`), if `init` is one. */
export function refreshTokenOf(init: RequestInit | undefined): string | undefined {
  const body = init?.body;
  if (!(body instanceof URLSearchParams) || body.get('grant_type') !== 'refresh_token') return undefined;
  return body.get('refresh_token') ?? undefined;
}

/**
 * The stored access token when a request was sent with another one: a call that met a 401 after a parallel call
 * refreshed the token is sent again with the new token, instead of refreshing once more.
 */
export function newerAccessToken(init: RequestInit | undefined, stored: string | undefined): string | undefined {
  const sent = new Headers(init?.headers).get('authorization')?.replace(/^Bearer\s+/i, '');
  return sent !== undefined && stored !== undefined && sent !== stored ? stored : undefined;
}

export function withBearer(init: RequestInit | undefined, accessToken: string): RequestInit {
  const headers = new Headers(init?.headers);
  headers.set('authorization', `Bearer ${accessToken}`);
  return { ...init, headers };
}
