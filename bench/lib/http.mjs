// One HTTP call of the benchmark tools (fetch), its body parsed as JSON when it is JSON.

/**
 * `method origin+urlPath` with `clientHeaders` (and `content-type: application/json` when there
 * is a body) plus `headers`. Returns the status, the parsed JSON (or null), the text and headers.
 */
export async function httpCall(origin, method, urlPath, { body, headers = {}, clientHeaders = {} } = {}) {
  const res = await fetch(origin + urlPath, {
    method,
    headers: { ...clientHeaders, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, json, text, headers: res.headers };
}
