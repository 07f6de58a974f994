/**
 * Origins as configured in CORS_ORIGINS: exact (`https://app.example.com`) or with any port
 * (`http://localhost:*`), the form development servers need. Returns a test of a request's
 * `Origin` header.
 */
export function originMatcher(configured: readonly string[]): (origin: string) => boolean {
  const exact = new Set<string>();
  const anyPort = new Set<string>();
  for (const entry of configured) {
    if (entry.endsWith(':*')) anyPort.add(new URL(entry.slice(0, -2)).origin);
    else exact.add(new URL(entry).origin);
  }
  return (origin) => {
    if (exact.has(origin)) return true;
    if (anyPort.size === 0) return false;
    const withoutPort = /^(https?:\/\/[^/:]+)(?::\d{1,5})?$/.exec(origin);
    return withoutPort !== null && anyPort.has(withoutPort[1]);
  };
}
