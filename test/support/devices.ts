import type { Test } from 'supertest';

/** A client as the server sees it: headers, address (through TRUST_PROXY) and its fingerprint. */
export interface Device {
  userAgent: string;
  acceptLanguage: string;
  ip: string;
  /** Client components, sent as the JSON `deviceFingerprint`; null sends none. */
  components: Record<string, string | number | boolean> | null;
}

export const MAC_CHROME: Device = {
  userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  acceptLanguage: 'en-US,en;q=0.9',
  ip: '203.0.113.7',
  components: {
    ua: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
    platform: 'MacIntel',
    lang: 'en-US',
    languages: 'en-US,en',
    tz: 'Europe/Berlin',
    screen: '1512x982',
    colorDepth: 30,
    dpr: 2,
    cores: 8,
    memory: 8,
    touch: 0,
    canvas: 'c4a1f0e2b7d93a11',
    webglVendor: 'Google Inc. (Apple)',
    webglRenderer: 'ANGLE (Apple, ANGLE Metal Renderer: Apple M2, Unspecified Version)',
    audio: '124.04347527516074',
    fonts: '9f2b61c0',
    cookies: true,
    dnt: 'unspecified',
  },
};

/** The same laptop a few weeks later: Chrome updated, on a trip (other network, other time zone). */
export const MAC_CHROME_DRIFTED: Device = {
  ...MAC_CHROME,
  userAgent: MAC_CHROME.userAgent.replace('Chrome/131', 'Chrome/133'),
  ip: '198.51.100.23',
  components: {
    ...MAC_CHROME.components,
    ua: MAC_CHROME.userAgent.replace('Chrome/131', 'Chrome/133'),
    tz: 'Europe/Paris',
  },
};

export const WINDOWS_FIREFOX: Device = {
  userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0',
  acceptLanguage: 'de-DE,de;q=0.8,en-US;q=0.5,en;q=0.3',
  ip: '192.0.2.44',
  components: {
    ua: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0',
    platform: 'Win32',
    lang: 'de-DE',
    languages: 'de-DE,de,en-US,en',
    tz: 'Europe/Berlin',
    screen: '1920x1080',
    colorDepth: 24,
    dpr: 1,
    cores: 16,
    touch: 0,
    canvas: '0b77e21d9c4f5a60',
    webglVendor: 'NVIDIA Corporation',
    webglRenderer: 'NVIDIA GeForce RTX 3060/PCIe/SSE2',
    audio: '35.749968223',
    fonts: '51ac3e7d',
    cookies: true,
    dnt: '1',
  },
};

export function fingerprintOf(device: Device): string | undefined {
  return device.components ? JSON.stringify(device.components) : undefined;
}

/** Sets the headers the device sends; the app must run with TRUST_PROXY=loopback for the address. */
export function from(req: Test, device: Device): Test {
  return req.set('User-Agent', device.userAgent).set('Accept-Language', device.acceptLanguage).set('X-Forwarded-For', device.ip);
}

/** A session as GET /api/v1/auth/sessions lists it. */
export interface ListedSession {
  id: string;
  userId: string;
  device: { id: string; name: string; type: string; fingerprint: string | null };
  ip: string;
  location: { country: string | null; city: string | null };
  status: 'active' | 'flagged';
  flag: { reason: string; score: number; flaggedAt: string } | null;
  createdAt: string;
  lastActiveAt: string;
  expiresAt: string;
  current: boolean;
}
