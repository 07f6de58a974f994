// A browser's walk through oidc-provider's own pages (login and consent), shared by the tests
// (oidc-provider.ts) and the benchmark (bench/run.mjs).

/**
 * Follows `authorizationUrl` through the pages of the provider at `issuer` as a browser would
 * (cookies, the login form with `account`, the consent form), or cancels at the login page;
 * resolves with the URL the provider sends the browser back to (the service's callback). `jar`
 * holds the browser's cookies: pass the same one again and the provider, which remembers the
 * sign-in and the consent, sends the browser straight back.
 */
export async function walkProviderPages(issuer, authorizationUrl, account, { cancel = false, jar = new Map() } = {}) {
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const remember = (res) => {
    for (const set of res.headers.getSetCookie()) {
      const [pair] = set.split(';');
      const at = pair.indexOf('=');
      jar.set(pair.slice(0, at).trim(), pair.slice(at + 1));
    }
  };
  let url = authorizationUrl;
  let form = null;
  for (let step = 0; step < 12; step += 1) {
    const res = await fetch(url, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: { cookie: cookie(), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      ...(form ? { body: form } : {}),
    });
    remember(res);
    form = null;
    if (res.status >= 300 && res.status < 400) {
      const next = new URL(res.headers.get('location'), url).href;
      if (!next.startsWith(issuer)) return next;
      url = next;
      continue;
    }
    const html = await res.text();
    const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1];
    if (!prompt) throw new Error(`unexpected provider page ${res.status}: ${html.slice(0, 300)}`);
    if (cancel) {
      url = `${url.replace(/\/$/, '')}/abort`;
      continue;
    }
    form = prompt === 'login' ? `prompt=login&login=${encodeURIComponent(account)}&password=any` : 'prompt=consent';
  }
  throw new Error('the provider did not send the browser back');
}
