/**
 * Where a browser may be sent back after signing in elsewhere: exactly one of the realm's
 * `allowedReturnUrls`, or a page of the service's own console (`consoleBase`'s origin, under
 * `/account/`). The text must be the URL as a parser writes it — no userinfo, backslash,
 * whitespace, fragment or `..` that a browser would read differently — so it cannot be an open
 * redirect. Returns the parsed URL, or null when it is not allowed.
 */
export function allowedReturnUrl(returnTo: unknown, allowed: readonly string[], consoleBase: string): URL | null {
  if (typeof returnTo !== 'string' || returnTo.length > 2048 || /[\\\s#]/.test(returnTo)) return null;
  let url: URL;
  try {
    url = new URL(returnTo);
  } catch {
    return null;
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password || url.href !== returnTo) return null;
  if (allowed.includes(returnTo)) return url;
  const console = new URL(consoleBase);
  return url.origin === console.origin && url.pathname.startsWith('/account/') ? url : null;
}
