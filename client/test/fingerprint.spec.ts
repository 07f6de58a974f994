import { createHash } from 'node:crypto';
import { collectFingerprint, FINGERPRINT_KEYS, sha256 } from '../src/fingerprint.js';

describe('fingerprint collector outside a browser', () => {
  it('hashes with WebCrypto to the same hex digest as Node’s own SHA-256', async () => {
    for (const text of ['', 'abc', 'data:image/png;base64,iVBORw0KGgo=', 'é\u{1F603}']) {
      expect(await sha256(text)).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
    }
  });

  it('returns only known component names, with flat values, once per page load', async () => {
    const first = collectFingerprint();
    expect(collectFingerprint()).toBe(first);
    const components = await first;
    for (const [key, value] of Object.entries(components)) {
      expect(FINGERPRINT_KEYS).toContain(key);
      expect(['string', 'number', 'boolean']).toContain(typeof value);
    }
    // No DOM here: no rendering traits are guessed.
    for (const key of ['canvas', 'audio', 'fonts', 'webglRenderer', 'screen'] as const) expect(components[key]).toBeUndefined();
    expect(components.tz).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone);
  });
});
