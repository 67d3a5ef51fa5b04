/**
 * What a person's browser does with an authorization URL, done with fetch: follow the redirects, keeping the
 * authorization server's cookies, through its (auto-approving) login and consent, to the redirect URI, and return
 * what the redirect URI answered. A bounded walk: a loop of redirects fails the test instead of hanging it.
 */
export async function followAuthorization(start: string): Promise<{ status: number; body: string; url: string }> {
  const cookies = new Map<string, string>();
  let url = start;
  for (let hop = 0; hop < 20; hop += 1) {
    const response = await fetch(url, {
      redirect: 'manual',
      headers: { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; ') },
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = ''] = cookie.split(';');
      const separator = pair.indexOf('=');
      cookies.set(pair.slice(0, separator).trim(), pair.slice(separator + 1).trim());
    }
    const location = response.headers.get('location');
    if (response.status < 300 || response.status >= 400 || location === null) {
      return { status: response.status, body: await response.text(), url };
    }
    await response.body?.cancel();
    url = new URL(location, url).href;
  }
  throw new Error(`More than 20 redirects from ${start}`);
}
