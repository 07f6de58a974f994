import { DomainError } from '../../../src/domain/errors';
import {
  ClientFingerprint,
  DeviceFingerprint,
  FINGERPRINT_CHANGE_GROUPS,
  FINGERPRINT_WEIGHTS,
  ServerObservedComponents,
  ipPrefix,
  matches,
  observeServerComponents,
  parseClientFingerprint,
  restoreFingerprint,
  similarity,
  stringSimilarity,
} from '../../../src/domain/session/device-fingerprint';

const THRESHOLD = 0.7;

const macChrome: ServerObservedComponents = {
  browser: 'Chrome',
  browserMajor: '131',
  os: 'macOS',
  osVersion: '10.15.7',
  deviceType: 'browser',
  acceptLanguage: 'en-us,en;q=0.9',
  ipPrefix: '203.0.113.0/24',
};

const laptopComponents = {
  canvas: 'c0ffee01',
  webglRenderer: 'ANGLE (Apple, ANGLE Metal Renderer: Apple M2, Unspecified Version)',
  audio: '124.04347527516074',
  fonts: 'f0a1b2c3',
  screen: '1512x982',
  tz: 'Europe/Berlin',
  lang: 'en-US',
};

/** All of the fingerprint client keys, as Chrome on a MacBook reports them. */
const fullChromeComponents = {
  ...laptopComponents,
  ua: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  platform: 'MacIntel',
  languages: 'en-US,en',
  webglVendor: 'Google Inc. (Apple)',
  cores: '8',
  memory: '8',
  colorDepth: '30',
  dpr: '2',
  touch: '0',
  cookies: 'true',
  dnt: 'unspecified',
};

function components(values: Record<string, string>): ClientFingerprint {
  return { kind: 'components', components: values };
}

function opaque(value: string): ClientFingerprint {
  return { kind: 'opaque', value };
}

function fingerprint(client: ClientFingerprint | null, server: ServerObservedComponents = {}): DeviceFingerprint {
  return { client, server };
}

function validationErrorOf(work: () => unknown): DomainError {
  try {
    work();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError');
}

describe('parseClientFingerprint', () => {
  it('gives null for an absent or empty fingerprint', () => {
    expect(parseClientFingerprint(undefined)).toBeNull();
    expect(parseClientFingerprint(null)).toBeNull();
    expect(parseClientFingerprint('')).toBeNull();
    expect(parseClientFingerprint('   ')).toBeNull();
  });

  it('reads a flat JSON object as components and normalises numbers and booleans to strings', () => {
    const parsed = parseClientFingerprint(JSON.stringify({ canvas: 'abc', cores: 8, dpr: 1.5, cookies: true }));
    expect(parsed).toEqual({ kind: 'components', components: { canvas: 'abc', cores: '8', dpr: '1.5', cookies: 'true' } });
  });

  it('keeps a "__proto__" key as an ordinary component', () => {
    const parsed = parseClientFingerprint('{"__proto__": "x", "canvas": "abc"}');
    expect(parsed?.kind).toBe('components');
    const values = parsed?.kind === 'components' ? parsed.components : {};
    expect(Object.keys(values).sort()).toEqual(['__proto__', 'canvas']);
    expect(Object.getPrototypeOf(values)).toBe(Object.prototype);
  });

  it('reads anything that is not a JSON object as one opaque component', () => {
    expect(parseClientFingerprint('3f9a0c7e5b')).toEqual({ kind: 'opaque', value: '3f9a0c7e5b' });
    expect(parseClientFingerprint('42')).toEqual({ kind: 'opaque', value: '42' });
    expect(parseClientFingerprint('"a string literal"')).toEqual({ kind: 'opaque', value: '"a string literal"' });
    expect(parseClientFingerprint('[1,2]')).toEqual({ kind: 'opaque', value: '[1,2]' });
    expect(parseClientFingerprint('{not json')).toEqual({ kind: 'opaque', value: '{not json' });
  });

  it.each([
    ['a nested object', JSON.stringify({ canvas: { hash: 'abc' } })],
    ['an array value', JSON.stringify({ languages: ['en', 'de'] })],
    ['a null value', JSON.stringify({ canvas: null })],
    ['more than 64 keys', JSON.stringify(Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 1])))],
    ['a value longer than 512 characters', JSON.stringify({ canvas: 'a'.repeat(513) })],
    ['a non-finite number', '{"cores": 1e999}'],
  ])('rejects an object with %s as VALIDATION_FAILED', (_case, raw) => {
    const error = validationErrorOf(() => parseClientFingerprint(raw));
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.meta.details?.[0]?.field).toBe('deviceFingerprint');
  });

  it('accepts exactly 64 keys and a 512-character value', () => {
    const sixtyFour = Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`k${i}`, i]));
    expect(parseClientFingerprint(JSON.stringify(sixtyFour))?.kind).toBe('components');
    expect(parseClientFingerprint(JSON.stringify({ canvas: 'é'.repeat(512) }))?.kind).toBe('components');
  });

  it('rejects a fingerprint over 4 KiB, counted in UTF-8 bytes, as VALIDATION_FAILED', () => {
    expect(parseClientFingerprint('a'.repeat(4096))?.kind).toBe('opaque');
    expect(validationErrorOf(() => parseClientFingerprint('a'.repeat(4097))).code).toBe('VALIDATION_FAILED');
    expect(validationErrorOf(() => parseClientFingerprint('é'.repeat(2049))).code).toBe('VALIDATION_FAILED');
  });
});

describe('ipPrefix', () => {
  it('gives the /24 of an IPv4 address', () => {
    expect(ipPrefix('203.0.113.77')).toBe('203.0.113.0/24');
    expect(ipPrefix('10.0.0.1')).toBe('10.0.0.0/24');
  });

  it('treats an IPv4-mapped IPv6 address as IPv4', () => {
    expect(ipPrefix('::ffff:203.0.113.77')).toBe('203.0.113.0/24');
    expect(ipPrefix('::FFFF:cb00:714d')).toBe('203.0.113.0/24');
  });

  it('gives the /48 of an IPv6 address, expanding "::" and in canonical form', () => {
    expect(ipPrefix('2001:db8:1234:5678::1')).toBe('2001:db8:1234::/48');
    expect(ipPrefix('2001:0DB8:0001:0000:0000:0000:0000:0001')).toBe('2001:db8:1::/48');
    expect(ipPrefix('2001:db8::1')).toBe('2001:db8::/48');
    expect(ipPrefix('2001::5678:1')).toBe('2001::/48');
    expect(ipPrefix('0:0:1::')).toBe('0:0:1::/48');
    expect(ipPrefix('::1')).toBe('::/48');
    expect(ipPrefix('fe80::1%eth0')).toBe('fe80::/48');
    expect(ipPrefix('[2001:db8:1234::1]')).toBe('2001:db8:1234::/48');
    expect(ipPrefix('64:ff9b::203.0.113.7')).toBe('64:ff9b::/48');
  });

  it('puts two addresses of one network under the same prefix and two networks under different ones', () => {
    expect(ipPrefix('2001:db8:1234:1::1')).toBe(ipPrefix('2001:db8:1234:ffff::2'));
    expect(ipPrefix('2001:db8:1234::1')).not.toBe(ipPrefix('2001:db8:1235::1'));
    expect(ipPrefix('198.51.100.1')).not.toBe(ipPrefix('198.51.101.1'));
  });

  it.each(['', 'localhost', '256.1.1.1', '1.2.3', '1.2.3.4.5', '2001:db8::1::2', '12345::1', '1:2:3:4:5:6:7:8:9', 'g::1'])(
    'gives undefined for %p, which is not an IP address',
    (text) => {
      expect(ipPrefix(text)).toBeUndefined();
    },
  );
});

describe('observeServerComponents', () => {
  it('normalises Accept-Language, reduces the IP to its prefix and drops blank values', () => {
    expect(
      observeServerComponents({
        browser: 'Chrome',
        browserMajor: '131',
        os: 'macOS',
        osVersion: '',
        deviceType: 'browser',
        acceptLanguage: 'en-US, en;q=0.9',
        ip: '::ffff:203.0.113.9',
      }),
    ).toEqual({
      browser: 'Chrome',
      browserMajor: '131',
      os: 'macOS',
      deviceType: 'browser',
      acceptLanguage: 'en-us,en;q=0.9',
      ipPrefix: '203.0.113.0/24',
    });
  });
});

describe('similarity', () => {
  it('gives 1 for identical fingerprints', () => {
    const reference = fingerprint(components(laptopComponents), macChrome);
    expect(similarity(reference, fingerprint(components({ ...laptopComponents }), { ...macChrome }))).toBe(1);
  });

  it.each(Object.keys(macChrome) as (keyof ServerObservedComponents)[])(
    'still matches at 0.70 when one of seven server components (%s) changed',
    (key) => {
      const score = similarity(fingerprint(null, macChrome), fingerprint(null, { ...macChrome, [key]: 'changed' }));
      expect(score).toBeLessThan(1);
      expect(matches(score, THRESHOLD)).toBe(true);
    },
  );

  it.each(Object.keys(fullChromeComponents))('still matches at 0.70 when one component (%s) of a full fingerprint changed', (key) => {
    const reference = fingerprint(components(fullChromeComponents), macChrome);
    const observed = fingerprint(components({ ...fullChromeComponents, [key]: 'changed' }), macChrome);
    const score = similarity(reference, observed);
    expect(score).toBeLessThan(1);
    expect(matches(score, THRESHOLD)).toBe(true);
  });

  it('still matches at 0.70 after a browser update seen from a new network', () => {
    const updated = { ...fullChromeComponents, ua: fullChromeComponents.ua.replace('Chrome/131', 'Chrome/132') };
    const score = similarity(
      fingerprint(components(fullChromeComponents), macChrome),
      fingerprint(components(updated), { ...macChrome, browserMajor: '132', ipPrefix: '198.51.100.0/24' }),
    );
    expect(matches(score, THRESHOLD)).toBe(true);
  });

  it('does not match a different browser on a different OS seen from the same network', () => {
    const windowsFirefox: ServerObservedComponents = {
      ...macChrome,
      browser: 'Firefox',
      browserMajor: '133',
      os: 'Windows',
      osVersion: '10',
    };
    expect(matches(similarity(fingerprint(null, macChrome), fingerprint(null, windowsFirefox)), THRESHOLD)).toBe(false);
  });

  it('does not match a device of the same model, browser, OS and network whose canvas and audio hashes differ', () => {
    const twin = { ...fullChromeComponents, canvas: '0badf00d', audio: '124.0434752751' };
    const score = similarity(fingerprint(components(fullChromeComponents), macChrome), fingerprint(components(twin), macChrome));
    expect(matches(score, THRESHOLD)).toBe(false);
  });

  it('scores the weighted share of matching components', () => {
    const w = FINGERPRINT_WEIGHTS.client;
    const score = similarity(
      fingerprint(components({ canvas: 'a', tz: 'Europe/Berlin' })),
      fingerprint(components({ canvas: 'a', tz: 'Asia/Tokyo' })),
    );
    expect(score).toBeCloseTo(w.canvas / (w.canvas + w.tz), 6);
  });

  it('weighs a client key outside the table with the default weight', () => {
    const score = similarity(
      fingerprint(components({ canvas: 'a', viewport: '1200x800' })),
      fingerprint(components({ canvas: 'a', viewport: '800x600' })),
    );
    const w = FINGERPRINT_WEIGHTS;
    expect(score).toBeCloseTo(w.client.canvas / (w.client.canvas + w.defaultClient), 6);
  });

  it('counts a component present on one side only as a mismatch', () => {
    const w = FINGERPRINT_WEIGHTS.client;
    const onlyInReference = similarity(fingerprint(components({ canvas: 'a', memory: '8' })), fingerprint(components({ canvas: 'a' })));
    const onlyObserved = similarity(fingerprint(components({ canvas: 'a' })), fingerprint(components({ canvas: 'a', memory: '8' })));
    expect(onlyInReference).toBeCloseTo(w.canvas / (w.canvas + w.memory), 6);
    expect(onlyObserved).toBeCloseTo(w.canvas / (w.canvas + w.memory), 6);
  });

  it('skips a component absent on both sides', () => {
    const score = similarity(
      fingerprint(components({ canvas: 'a' }), { browser: 'Firefox' }),
      fingerprint(components({ canvas: 'a' }), { browser: 'Firefox' }),
    );
    expect(score).toBe(1);
  });

  it('treats an empty server component as absent', () => {
    expect(similarity(fingerprint(null, { browser: 'Chrome', os: '' }), fingerprint(null, { browser: 'Chrome' }))).toBe(1);
  });

  it('does not match when the client stops sending the fingerprint it logged in with', () => {
    const score = similarity(fingerprint(components(laptopComponents), macChrome), fingerprint(null, macChrome));
    expect(matches(score, THRESHOLD)).toBe(false);
  });

  it('compares a session opened without a fingerprint on the server-observed components alone', () => {
    const reference = fingerprint(null, macChrome);
    expect(similarity(reference, fingerprint(components(laptopComponents), macChrome))).toBe(1);
    expect(similarity(reference, fingerprint(opaque('anything'), { ...macChrome, browser: 'Edge' }))).toBeLessThan(1);
  });

  it('gives 1 when nothing is comparable', () => {
    expect(similarity(fingerprint(null), fingerprint(null))).toBe(1);
    expect(similarity(fingerprint(components({})), fingerprint(components({})))).toBe(1);
  });

  describe('opaque form', () => {
    const hash = '9c1f3e7a2b4d6f80a1c3e5f7092b4d6f8a0c2e4f6b8d0f1a3c5e7092b4d6f8a0';

    it('still matches after a small edit of the opaque string', () => {
      const edited = `${hash.slice(0, 30)}x${hash.slice(31)}`;
      const score = similarity(fingerprint(opaque(hash), macChrome), fingerprint(opaque(edited), macChrome));
      expect(score).toBeLessThan(1);
      expect(matches(score, THRESHOLD)).toBe(true);
    });

    it('does not match an unrelated opaque string, even from the same browser and network', () => {
      const unrelated = '4e8b02d6c9a1f5370e2b6d8c4a9f1e3b7d5c0a2e8f6b4d1c9e7a3f5b0d2c8e6a';
      const score = similarity(fingerprint(opaque(hash), macChrome), fingerprint(opaque(unrelated), macChrome));
      expect(matches(score, THRESHOLD)).toBe(false);
    });

    it('does not match when the client switches between the opaque form and components', () => {
      const score = similarity(fingerprint(opaque(hash), macChrome), fingerprint(components(laptopComponents), macChrome));
      expect(matches(score, THRESHOLD)).toBe(false);
    });
  });
});

const iphoneSafari: ServerObservedComponents = {
  browser: 'Mobile Safari',
  browserMajor: '17',
  os: 'iOS',
  osVersion: '17.6',
  deviceType: 'mobile',
  acceptLanguage: 'en-us,en;q=0.9',
  ipPrefix: '203.0.113.0/24',
};

/** The fingerprint client keys as Safari on an iPhone reports them (no deviceMemory). */
const iphoneComponents = {
  ua: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Mobile/15E148 Safari/604.1',
  platform: 'iPhone',
  lang: 'en-US',
  languages: 'en-US,en',
  tz: 'Europe/Berlin',
  screen: '390x844',
  colorDepth: '24',
  dpr: '3',
  cores: '4',
  touch: '5',
  canvas: '5afe1717',
  webglVendor: 'Apple Inc.',
  webglRenderer: 'Apple GPU',
  audio: '35.10893253237009',
  fonts: 'aa11bb22',
  cookies: 'true',
  dnt: 'unspecified',
};

/** iOS 17.6 → 18.0: the OS, Safari and WebKit update together; fonts and canvas hashes change. */
function iosMajorUpdate(extra: Record<string, string> = {}): DeviceFingerprint {
  return fingerprint(
    components({
      ...iphoneComponents,
      ua: iphoneComponents.ua.replace('OS 17_6', 'OS 18_0').replace('Version/17.6', 'Version/18.0'),
      canvas: '0dd5e7e1',
      fonts: 'cc33dd44',
      ...extra,
    }),
    { ...iphoneSafari, browserMajor: '18', osVersion: '18.0' },
  );
}

describe('similarity: changes that belong together', () => {
  const w = FINGERPRINT_WEIGHTS;
  /** Σ weights of a full iPhone fingerprint, each change group counted once (at its heaviest member). */
  const iphoneTotal = (() => {
    const client = Object.keys(iphoneComponents).reduce((sum, key) => sum + w.client[key as keyof typeof w.client], 0);
    const server = Object.keys(iphoneSafari).reduce((sum, key) => sum + w.server[key as keyof typeof w.server], 0);
    // userAgent: ua 2, browserMajor 1, osVersion 1 → 2; language: 1, 1, 1 → 1; display: screen 4, dpr 2, colorDepth 1 → 4.
    return client + server - (4 - 2) - (3 - 1) - (7 - 4);
  })();

  it('names the groups: the User-Agent read twice, the language read three times, the screen', () => {
    expect(FINGERPRINT_CHANGE_GROUPS).toEqual({
      userAgent: ['client:ua', 'server:browserMajor', 'server:osVersion'],
      language: ['client:lang', 'client:languages', 'server:acceptLanguage'],
      display: ['client:screen', 'client:dpr', 'client:colorDepth'],
    });
  });

  it('charges a language change seen in lang, languages and Accept-Language once', () => {
    const reference = fingerprint(components({ canvas: 'a', lang: 'en-US', languages: 'en-US,en' }), { acceptLanguage: 'en-us,en' });
    const observed = fingerprint(components({ canvas: 'a', lang: 'de-DE', languages: 'de-DE,en-US,en' }), {
      acceptLanguage: 'de-de,en-us;q=0.9,en;q=0.8',
    });
    // Total: canvas 14 + the language group 1; charged: 1.
    expect(similarity(reference, observed)).toBeCloseTo(1 - 1 / (w.client.canvas + 1), 6);
  });

  it('accepts an iOS major update that changed the fonts and canvas hashes, charged as the canvas alone', () => {
    const reference = fingerprint(components(iphoneComponents), iphoneSafari);
    const score = similarity(reference, iosMajorUpdate());
    expect(score).toBeCloseTo(1 - w.client.canvas / iphoneTotal, 6);
    expect(matches(score, THRESHOLD)).toBe(true);
  });

  it('still accepts it seen from a new network, in another time zone', () => {
    const reference = fingerprint(components(iphoneComponents), iphoneSafari);
    const observed = iosMajorUpdate({ tz: 'Europe/Lisbon' });
    observed.server.ipPrefix = '198.51.100.0/24';
    const score = similarity(reference, observed);
    expect(score).toBeCloseTo(1 - (w.client.canvas + w.client.tz + w.server.ipPrefix) / iphoneTotal, 6);
    expect(matches(score, THRESHOLD)).toBe(true);
  });

  it('charges the fonts hash on its own after a Chromium update (fonts ship with the OS there, not the browser)', () => {
    const reference = fingerprint(components(fullChromeComponents), macChrome);
    const updatedUa = fullChromeComponents.ua.replace('Chrome/131', 'Chrome/132');
    const observed = fingerprint(components({ ...fullChromeComponents, ua: updatedUa, canvas: 'feedbeef', fonts: '00112233' }), {
      ...macChrome,
      browserMajor: '132',
    });
    const withoutFonts = fingerprint(components({ ...fullChromeComponents, ua: updatedUa, canvas: 'feedbeef' }), {
      ...macChrome,
      browserMajor: '132',
    });
    expect(similarity(reference, withoutFonts) - similarity(reference, observed)).toBeGreaterThan(0.05);
  });

  it('does not take a downgrade, or another browser, as an update that explains a new canvas hash', () => {
    const reference = fingerprint(components(iphoneComponents), iphoneSafari);
    const updated = similarity(reference, iosMajorUpdate());
    const backwards = similarity(iosMajorUpdate(), reference);
    const otherBrowser = iosMajorUpdate();
    otherBrowser.server.browser = 'Chrome';
    expect(backwards).toBeLessThan(THRESHOLD);
    expect(similarity(reference, otherBrowser)).toBeLessThan(THRESHOLD);
    expect(updated).toBeGreaterThanOrEqual(THRESHOLD);
  });

  it('takes a new pixel ratio as explaining a new canvas hash (another display)', () => {
    const reference = fingerprint(components(fullChromeComponents), macChrome);
    const external = { ...fullChromeComponents, screen: '2560x1440', dpr: '1', colorDepth: '24', canvas: 'feedbeef' };
    const sameRatio = { ...fullChromeComponents, screen: '2560x1440', colorDepth: '24', canvas: 'feedbeef' };
    const onExternal = similarity(reference, fingerprint(components(external), macChrome));
    const canvasOnly = similarity(reference, fingerprint(components({ ...fullChromeComponents, canvas: 'feedbeef' }), macChrome));
    expect(onExternal).toBeCloseTo(canvasOnly, 6);
    // Without a change of pixel ratio the new canvas hash is charged on top of the display change.
    expect(similarity(reference, fingerprint(components(sameRatio), macChrome))).toBeLessThan(canvasOnly - 0.04);
  });

  it.each([
    ['as is', {}, {}],
    ['claiming an update', { ua: 'Chrome/132' }, { browserMajor: '132' }],
    ['claiming another display', { screen: '2560x1440', dpr: '1', colorDepth: '24' }, {}],
    [
      'claiming an update, another display and another language',
      { ua: 'Chrome/133', screen: '1920x1080', dpr: '1.25', lang: 'fr-FR' },
      { browserMajor: '133', acceptLanguage: 'fr-fr' },
    ],
  ])('never accepts a device whose canvas and audio hashes both differ (%s)', (_what, client, server) => {
    const reference = fingerprint(components(fullChromeComponents), macChrome);
    const twin = fingerprint(components({ ...fullChromeComponents, ...client, canvas: '0badf00d', audio: '124.0434752751' }), {
      ...macChrome,
      ...server,
    });
    const score = similarity(reference, twin);
    // canvas and audio are always charged in full: at least 26 of a total of at most 77.
    expect(score).toBeLessThanOrEqual(1 - (w.client.canvas + w.client.audio) / 77 + 1e-6);
    expect(matches(score, THRESHOLD)).toBe(false);
  });
});

describe('stringSimilarity', () => {
  it('is 1 for equal strings, high after a small edit and low for unrelated strings', () => {
    expect(stringSimilarity('abcdef', 'abcdef')).toBe(1);
    expect(stringSimilarity('Chrome/131|1920x1080|Europe/Berlin', 'Chrome/132|1920x1080|Europe/Berlin')).toBeGreaterThan(0.9);
    expect(stringSimilarity('abcdef', 'uvwxyz')).toBe(0);
  });

  it('compares strings shorter than two characters by equality', () => {
    expect(stringSimilarity('a', 'a')).toBe(1);
    expect(stringSimilarity('a', 'b')).toBe(0);
    expect(stringSimilarity('', 'ab')).toBe(0);
  });

  it('counts repeated bigrams only as often as they occur on both sides', () => {
    expect(stringSimilarity('aaaa', 'aa')).toBeCloseTo((2 * 1) / (3 + 1), 6);
  });
});

describe('matches', () => {
  it('matches when the score reaches the threshold and not below it', () => {
    expect(matches(0.7, 0.7)).toBe(true);
    expect(matches(0.699999, 0.7)).toBe(false);
  });
});

describe('restoreFingerprint', () => {
  it('gives back a fingerprint that went through JSON unchanged, so it still matches itself', () => {
    const recorded = fingerprint(components(fullChromeComponents), macChrome);
    const restored = restoreFingerprint(JSON.parse(JSON.stringify(recorded)));
    expect(restored).toEqual(recorded);
    expect(similarity(restored, recorded)).toBe(1);
    expect(restoreFingerprint(JSON.parse(JSON.stringify(fingerprint(opaque('abc123'), macChrome))))).toEqual(
      fingerprint(opaque('abc123'), macChrome),
    );
  });

  it.each([
    ['an empty object', {}],
    ['null', null],
    ['an array', [1, 2]],
    ['a string', 'x'],
  ])('reads %s as no client and no server components', (_what, stored) => {
    expect(restoreFingerprint(stored)).toEqual({ client: null, server: {} });
  });

  it('drops parts of the wrong shape and keeps the rest', () => {
    expect(
      restoreFingerprint({
        client: { kind: 'components', components: { canvas: 'c1', cores: 8, nested: { a: 1 } } },
        server: { browser: 'Chrome', os: 7, unknownKey: 'x', ipPrefix: '203.0.113.0/24' },
      }),
    ).toEqual({ client: components({ canvas: 'c1' }), server: { browser: 'Chrome', ipPrefix: '203.0.113.0/24' } });
    expect(restoreFingerprint({ client: { kind: 'opaque', value: 5 }, server: [] })).toEqual({ client: null, server: {} });
    expect(restoreFingerprint({ client: { kind: 'other' } }).client).toBeNull();
  });
});
