import { DomainError } from '../errors';

/** the raw `deviceFingerprint` is at most 4 KiB (UTF-8 bytes). */
export const MAX_FINGERPRINT_BYTES = 4096;
/** a components object has at most 64 keys. */
export const MAX_FINGERPRINT_KEYS = 64;
/** a string component value has at most 512 characters. */
export const MAX_COMPONENT_VALUE_LENGTH = 512;
/** the default of `FINGERPRINT_MATCH_THRESHOLD`. */
export const DEFAULT_FINGERPRINT_MATCH_THRESHOLD = 0.7;

/** Session `device.type` values. */
export const DEVICE_TYPES = ['browser', 'mobile', 'desktop', 'api', 'unknown'] as const;
export type DeviceType = (typeof DEVICE_TYPES)[number];

/**
 * What the client sent as `deviceFingerprint`, after {@link parseClientFingerprint}: either a flat
 * map of named components (values normalised to strings) or one opaque string.
 */
export type ClientFingerprint =
  | { readonly kind: 'components'; readonly components: Readonly<Record<string, string>> }
  | { readonly kind: 'opaque'; readonly value: string };

/** What the server observes itself on each request (User-Agent header, Accept-Language, client IP). */
export interface ServerObservedComponents {
  browser?: string;
  browserMajor?: string;
  os?: string;
  osVersion?: string;
  deviceType?: string;
  acceptLanguage?: string;
  ipPrefix?: string;
}

/**
 * A session's reference fingerprint (recorded at login, or accepted at the last MFA
 * re-verification) and the fingerprint observed on a later use. Plain data, JSON-serialisable.
 */
export interface DeviceFingerprint {
  client: ClientFingerprint | null;
  server: ServerObservedComponents;
}

/** The client component names of fingerprint table. */
export type KnownClientComponent =
  | 'canvas'
  | 'webglVendor'
  | 'webglRenderer'
  | 'audio'
  | 'fonts'
  | 'screen'
  | 'cores'
  | 'memory'
  | 'platform'
  | 'colorDepth'
  | 'dpr'
  | 'touch'
  | 'tz'
  | 'lang'
  | 'languages'
  | 'ua'
  | 'cookies'
  | 'dnt';

/**
 * Weight of each component in {@link similarity}. Only ratios matter: a component's influence is
 * its weight divided by the sum of the weights present on either side (a full fingerprint from a
 * Chromium browser sums to 77).
 *
 * Rationale (backed by test/unit/domain/fingerprint-evaluation.spec.ts; numbers in
 * docs/fingerprint.md):
 * - **Hard signals** — rendering hashes that differ between two devices of the same model and
 *   that an attacker cannot read off a request: `canvas` and `audio`. Together they exceed 30 % of
 *   a full fingerprint, so a device of the same model, browser, OS, locale and network falls
 *   below 0.70 on them alone (its fonts hash is often the same: default fonts). Each alone stays
 *   under 30 %, so one of them changing after an update does not flag a session.
 * - **Stable hardware and software traits** — `webglRenderer` (the GPU: separates models, not
 *   two devices of one model), `fonts` (installed fonts: changes when an OS update or an office
 *   suite adds fonts), then `screen`, `cores`, `platform`, `webglVendor` (few distinct values) and
 *   the OS and browser family the server reads from the User-Agent.
 * - **Soft signals** — what changes legitimately (IP prefix, language, time zone, browser and OS
 *   version, `dpr` with the page zoom, `screen` on an external display) or is trivially copied
 *   (User-Agent, Accept-Language, `platform`) or nearly constant (`cookies`, `dnt`,
 *   `colorDepth`, `touch`, `memory`): low weight, so that one or two of them changing, together
 *   with an occasional rendering-hash change, do not flag a session.
 * - `defaultClient` applies to client keys outside the table (e.g. a collector's `viewport`):
 *   unknown meaning, so as little as the softest known signals.
 * - `opaque` is the whole client fingerprint sent as one string; it weighs about as much as a
 *   full components map, so the server-observed components stay a minority beside it.
 */
export const FINGERPRINT_WEIGHTS: {
  readonly client: Readonly<Record<KnownClientComponent, number>>;
  readonly defaultClient: number;
  readonly opaque: number;
  readonly server: Readonly<Record<keyof ServerObservedComponents, number>>;
} = Object.freeze({
  client: Object.freeze({
    canvas: 14,
    audio: 12,
    webglRenderer: 8,
    fonts: 5,
    screen: 4,
    cores: 3,
    platform: 3,
    webglVendor: 3,
    memory: 2,
    dpr: 2,
    ua: 2,
    tz: 1.5,
    lang: 1,
    languages: 1,
    colorDepth: 1,
    touch: 1,
    cookies: 0.5,
    dnt: 0.5,
  }),
  defaultClient: 1,
  opaque: 60,
  server: Object.freeze({
    browser: 3,
    browserMajor: 1,
    os: 3,
    osVersion: 1,
    deviceType: 2,
    acceptLanguage: 1,
    ipPrefix: 1.5,
  }),
});

const SERVER_COMPONENTS = Object.keys(FINGERPRINT_WEIGHTS.server) as (keyof ServerObservedComponents)[];

/**
 * Parses the raw `deviceFingerprint` (body field or `X-Device-Fingerprint` header) per the fingerprint rules.
 * A flat JSON object becomes a components map (numbers and booleans normalised to strings);
 * anything else — including JSON that is not an object, such as `42`, `"abc"`, `null` or an
 * array — is one opaque component (trimmed). An absent or blank value gives null.
 *
 * @throws DomainError VALIDATION_FAILED (field `deviceFingerprint`) when the raw value exceeds
 *   4 KiB, or is a JSON object with more than 64 keys, or with a value that is not a string of at
 *   most 512 characters, a finite number or a boolean (nested objects, arrays, null).
 */
export function parseClientFingerprint(raw: string | undefined | null): ClientFingerprint | null {
  if (raw === undefined || raw === null) return null;
  if (utf8Length(raw) > MAX_FINGERPRINT_BYTES) {
    throw invalid(`must be at most ${MAX_FINGERPRINT_BYTES} bytes`);
  }
  const value = raw.trim();
  if (value === '') return null;

  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return { kind: 'opaque', value };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { kind: 'opaque', value };
  }

  const entries = Object.entries(parsed);
  if (entries.length > MAX_FINGERPRINT_KEYS) {
    throw invalid(`must have at most ${MAX_FINGERPRINT_KEYS} components`);
  }
  const normalised: [string, string][] = entries.map(([key, component]) => [key, normaliseComponent(key, component)]);
  // fromEntries defines own properties, so a "__proto__" key stays data and never a prototype.
  return { kind: 'components', components: Object.freeze(Object.fromEntries(normalised)) };
}

function normaliseComponent(key: string, component: unknown): string {
  if (typeof component === 'string') {
    if (codePointLength(component) > MAX_COMPONENT_VALUE_LENGTH) {
      throw invalid(`component "${key}" must be at most ${MAX_COMPONENT_VALUE_LENGTH} characters`);
    }
    return component;
  }
  if (typeof component === 'number' && Number.isFinite(component)) return String(component);
  if (typeof component === 'boolean') return String(component);
  throw invalid(`component "${key}" must be a string, a finite number or a boolean`);
}

function invalid(message: string): DomainError {
  return DomainError.validation('deviceFingerprint', message);
}

/** Input of {@link observeServerComponents}: the parsed User-Agent plus two request facts. */
export interface ServerObservation {
  browser?: string;
  browserMajor?: string;
  os?: string;
  osVersion?: string;
  deviceType?: string;
  acceptLanguage?: string;
  ip?: string;
}

/**
 * Builds the server-observed components of one request: blank values are dropped (so they count
 * as absent), Accept-Language is lower-cased without spaces and capped at 512 characters (it is
 * stored in the session), and the IP is reduced to its /24 or /48 prefix.
 */
export function observeServerComponents(observation: ServerObservation): ServerObservedComponents {
  const components: ServerObservedComponents = {};
  const set = (key: keyof ServerObservedComponents, value: string | undefined): void => {
    const trimmed = value?.trim();
    if (trimmed) components[key] = trimmed.slice(0, MAX_COMPONENT_VALUE_LENGTH);
  };
  set('browser', observation.browser);
  set('browserMajor', observation.browserMajor);
  set('os', observation.os);
  set('osVersion', observation.osVersion);
  set('deviceType', observation.deviceType);
  set('acceptLanguage', observation.acceptLanguage?.replace(/\s+/g, '').toLowerCase());
  set('ipPrefix', observation.ip === undefined ? undefined : ipPrefix(observation.ip));
  return components;
}

/**
 * The network an address belongs to, as compared by {@link similarity}: the IPv4 /24
 * (`203.0.113.0/24`) or the IPv6 /48 in canonical form (`2001:db8:1234::/48`). IPv4-mapped IPv6
 * (`::ffff:203.0.113.7`, as Node reports IPv4 clients on a dual-stack socket) is treated as IPv4.
 * A zone id (`fe80::1%eth0`) and brackets are ignored. Returns undefined for anything that is not
 * an IP address.
 */
export function ipPrefix(ip: string): string | undefined {
  let address = ip.trim();
  if (address.startsWith('[') && address.endsWith(']')) address = address.slice(1, -1);
  const zone = address.indexOf('%');
  if (zone !== -1) address = address.slice(0, zone);

  const v4 = parseIpv4(address);
  if (v4) return ipv4Prefix(v4);

  const v6 = parseIpv6(address);
  if (!v6) return undefined;
  const isMappedIpv4 = v6.slice(0, 5).every((h) => h === 0) && v6[5] === 0xffff;
  if (isMappedIpv4) return ipv4Prefix([v6[6] >> 8, v6[6] & 0xff, v6[7] >> 8, v6[7] & 0xff]);

  const head = v6.slice(0, 3);
  while (head.length > 0 && head[head.length - 1] === 0) head.pop();
  // RFC 5952: the trailing zero hextets are the longest zero run, so they are the ones compressed.
  return `${head.map((h) => h.toString(16)).join(':')}::/48`;
}

function ipv4Prefix(octets: number[]): string {
  return `${octets[0]}.${octets[1]}.${octets[2]}.0/24`;
}

function parseIpv4(address: string): number[] | undefined {
  const parts = address.split('.');
  if (parts.length !== 4) return undefined;
  const octets: number[] = [];
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return undefined;
    const octet = Number(part);
    if (octet > 255) return undefined;
    octets.push(octet);
  }
  return octets;
}

/** Eight 16-bit groups, or undefined when the text is not an IPv6 address. */
function parseIpv6(address: string): number[] | undefined {
  if (!address.includes(':')) return undefined;
  const halves = address.split('::');
  if (halves.length > 2) return undefined;

  const parseGroups = (text: string, allowIpv4Tail: boolean): number[] | undefined => {
    if (text === '') return [];
    const parts = text.split(':');
    const groups: number[] = [];
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i];
      if (allowIpv4Tail && i === parts.length - 1 && part.includes('.')) {
        const v4 = parseIpv4(part);
        if (!v4) return undefined;
        groups.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(part)) return undefined;
        groups.push(parseInt(part, 16));
      }
    }
    return groups;
  };

  if (halves.length === 1) {
    const groups = parseGroups(address, true);
    return groups && groups.length === 8 ? groups : undefined;
  }
  const head = parseGroups(halves[0], false);
  const tail = parseGroups(halves[1], true);
  if (!head || !tail || head.length + tail.length > 7) return undefined;
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}

/**
 * Reads a stored reference fingerprint back (it is kept as JSON with the session). Parts that do
 * not have the expected shape are dropped: a client part that is neither a components map nor an
 * opaque string becomes null, and only string server components are kept. A reference that is
 * not an object at all gives `{ client: null, server: {} }`.
 */
export function restoreFingerprint(stored: unknown): DeviceFingerprint {
  const record = isPlainObject(stored) ? stored : {};
  return { client: restoreClient(record.client), server: restoreServer(record.server) };
}

function restoreClient(client: unknown): ClientFingerprint | null {
  if (!isPlainObject(client)) return null;
  if (client.kind === 'opaque' && typeof client.value === 'string') return { kind: 'opaque', value: client.value };
  if (client.kind !== 'components' || !isPlainObject(client.components)) return null;
  const entries = Object.entries(client.components).filter((entry): entry is [string, string] => typeof entry[1] === 'string');
  return { kind: 'components', components: Object.freeze(Object.fromEntries(entries)) };
}

function restoreServer(server: unknown): ServerObservedComponents {
  const components: ServerObservedComponents = {};
  if (!isPlainObject(server)) return components;
  for (const key of SERVER_COMPONENTS) {
    const value = Object.hasOwn(server, key) ? server[key] : undefined;
    if (typeof value === 'string') components[key] = value;
  }
  return components;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A component as {@link similarity} names it: `client:<key>` for a key of the client's components
 * map, `server:<name>` for a server-observed component.
 */
export type ComponentId = `client:${string}` | `server:${keyof ServerObservedComponents}`;

/**
 * Components that report one change between them: when several members of a group differ, the
 * pair is charged the weight of the heaviest differing member, not the sum. Each group is one fact
 * read in several places:
 * - `userAgent` — the User-Agent string the client reports (`ua`) and the browser major and OS
 *   version the server parses from the User-Agent header;
 * - `language` — the language preference, as `lang`, `languages` and the Accept-Language header;
 * - `display` — the screen the window is on: another screen brings its resolution, pixel ratio and
 *   colour depth together.
 *
 * {@link similarity} adds rendering hashes to a group when the group's change is of the kind that
 * changes them (see there). `audio` is in no group, and a group holding `canvas` is charged at
 * least the weight of `canvas`: a device whose canvas and audio hashes both differ is charged both
 * weights in full, whatever else it claims.
 */
export const FINGERPRINT_CHANGE_GROUPS: Readonly<Record<'userAgent' | 'language' | 'display', readonly ComponentId[]>> = Object.freeze({
  userAgent: Object.freeze<ComponentId[]>(['client:ua', 'server:browserMajor', 'server:osVersion']),
  language: Object.freeze<ComponentId[]>(['client:lang', 'client:languages', 'server:acceptLanguage']),
  display: Object.freeze<ComponentId[]>(['client:screen', 'client:dpr', 'client:colorDepth']),
});

/**
 * How much `observed` looks like the same device as `reference`, in [0, 1]: one minus the weighted
 * share of what differs, with weights from {@link FINGERPRINT_WEIGHTS} and changes that belong
 * together charged once ({@link FINGERPRINT_CHANGE_GROUPS}).
 *
 * Rules:
 * - Every component present on at least one side adds its weight to the total. Named components
 *   (client keys and server-observed components) differ when their values are not equal; the
 *   opaque form is compared by {@link stringSimilarity} and is charged weight × (1 − similarity).
 * - A component present on one side only differs (this includes a client that switches between
 *   the object and the opaque form, or stops sending its fingerprint). A component absent on both
 *   sides is skipped.
 * - Differing components of one change group are charged together: the heaviest one's weight.
 *   Groups that share a differing component are charged as one. Every other differing component
 *   is charged its own weight.
 * - **An update** — the same browser family on the same OS family, whose browser major version or
 *   OS version went up and neither went down — is expected to change the rendering: a differing
 *   `canvas` joins the `userAgent` group, and on WebKit (Safari, and every browser on iOS, whose
 *   fonts and text rendering ship with the OS and with Safari) so does a differing `fonts`.
 * - **Another pixel ratio** (`dpr` present and different on both sides) is expected to change the
 *   canvas hash (a collector that sizes its canvas by the pixel ratio rasterises at another
 *   scale): a differing `canvas` joins the `display` group.
 * - When the reference has no client fingerprint (a login without one), only the server-observed
 *   components are compared, whatever the observed client sends.
 * - When nothing is comparable, the result is 1: nothing contradicts the reference.
 *
 * Groups only ever merge a differing `canvas` with lighter components: `canvas` itself and `audio`
 * are always charged in full, so no claimed update or display change lets a device with other
 * rendering hashes through. The score is rounded to 6 decimals so that a share such as 7/10
 * compares as exactly 0.7. Pure: the result depends on the two fingerprints only.
 */
export function similarity(reference: DeviceFingerprint, observed: DeviceFingerprint): number {
  let total = 0;
  let opaqueCharge = 0;
  const differing = new Map<ComponentId, number>();
  const compared = new Map<ComponentId, number>();
  const compare = (id: ComponentId, weight: number, equal: boolean): void => {
    total += weight;
    compared.set(id, weight);
    if (!equal) differing.set(id, weight);
  };

  if (reference.client !== null) {
    const refOpaque = reference.client.kind === 'opaque' ? reference.client.value : undefined;
    const obsOpaque = observed.client?.kind === 'opaque' ? observed.client.value : undefined;
    if (refOpaque !== undefined || obsOpaque !== undefined) {
      const share = refOpaque !== undefined && obsOpaque !== undefined ? stringSimilarity(refOpaque, obsOpaque) : 0;
      total += FINGERPRINT_WEIGHTS.opaque;
      opaqueCharge = FINGERPRINT_WEIGHTS.opaque * (1 - share);
    }

    const refComponents = reference.client.kind === 'components' ? reference.client.components : {};
    const obsComponents = observed.client?.kind === 'components' ? observed.client.components : {};
    const keys = new Set([...Object.keys(refComponents), ...Object.keys(obsComponents)]);
    for (const key of keys) {
      const a = Object.hasOwn(refComponents, key) ? refComponents[key] : undefined;
      const b = Object.hasOwn(obsComponents, key) ? obsComponents[key] : undefined;
      compare(`client:${key}`, clientWeight(key), a !== undefined && a === b);
    }
  }

  for (const key of SERVER_COMPONENTS) {
    const a = presentOrUndefined(reference.server[key]);
    const b = presentOrUndefined(observed.server[key]);
    if (a === undefined && b === undefined) continue;
    compare(`server:${key}`, FINGERPRINT_WEIGHTS.server[key], a === b);
  }

  // A change group is one fact: it weighs as its heaviest compared member in the total too.
  for (const group of Object.values(FINGERPRINT_CHANGE_GROUPS)) {
    const weights = group.map((id) => compared.get(id)).filter((w): w is number => w !== undefined);
    if (weights.length > 1) total -= weights.reduce((sum, w) => sum + w, 0) - Math.max(...weights);
  }
  if (total === 0) return 1;
  const charged = opaqueCharge + chargeDiffering(differing, activeGroups(reference, observed));
  return Math.round((1 - charged / total) * 1e6) / 1e6;
}

/** The change groups that apply to this pair, with the rendering hashes its changes explain. */
function activeGroups(reference: DeviceFingerprint, observed: DeviceFingerprint): ComponentId[][] {
  const userAgent: ComponentId[] = [...FINGERPRINT_CHANGE_GROUPS.userAgent];
  const display: ComponentId[] = [...FINGERPRINT_CHANGE_GROUPS.display];
  if (isUpdate(reference.server, observed.server)) {
    userAgent.push('client:canvas');
    if (isWebKit(reference.server) && isWebKit(observed.server)) userAgent.push('client:fonts');
  }
  const refDpr = componentOf(reference, 'dpr');
  const obsDpr = componentOf(observed, 'dpr');
  if (refDpr !== undefined && obsDpr !== undefined && refDpr !== obsDpr) display.push('client:canvas');
  return [userAgent, [...FINGERPRINT_CHANGE_GROUPS.language], display];
}

/**
 * Sum of the charges: each set of differing components linked through groups is charged its
 * heaviest member's weight; a differing component in no group is charged its own weight.
 */
function chargeDiffering(differing: Map<ComponentId, number>, groups: ComponentId[][]): number {
  // Union–find over the differing components; groups link the members that differ.
  const parent = new Map<ComponentId, ComponentId>([...differing.keys()].map((id) => [id, id]));
  const root = (id: ComponentId): ComponentId => {
    let current = id;
    while (parent.get(current) !== current) current = parent.get(current) as ComponentId;
    return current;
  };
  for (const group of groups) {
    const members = group.filter((id) => differing.has(id));
    for (const member of members.slice(1)) parent.set(root(member), root(members[0]));
  }
  const heaviest = new Map<ComponentId, number>();
  for (const [id, weight] of differing) {
    const r = root(id);
    heaviest.set(r, Math.max(heaviest.get(r) ?? 0, weight));
  }
  let charged = 0;
  for (const weight of heaviest.values()) charged += weight;
  return charged;
}

/**
 * True when `observed` is the reference's browser after an update: same browser and OS family,
 * and the browser major version or the OS version went up while neither went down.
 */
function isUpdate(reference: ServerObservedComponents, observed: ServerObservedComponents): boolean {
  if (!reference.browser || reference.browser !== observed.browser) return false;
  if (!reference.os || reference.os !== observed.os) return false;
  const browser = compareVersions(reference.browserMajor, observed.browserMajor);
  const os = compareVersions(reference.osVersion, observed.osVersion);
  if (browser === undefined || os === undefined) return false;
  return browser >= 0 && os >= 0 && browser + os > 0;
}

/**
 * Compares dotted numeric versions ("17.4" < "18", "10.15.7" = "10.15.7"): 1 when `b` is later,
 * -1 when earlier, 0 when equal or both absent; undefined when either is not numeric or only one
 * side has a version.
 */
function compareVersions(a: string | undefined, b: string | undefined): number | undefined {
  if (!a && !b) return 0;
  if (!a || !b || !/^\d+(\.\d+)*$/.test(a) || !/^\d+(\.\d+)*$/.test(b)) return undefined;
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (y[i] ?? 0) - (x[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

/** Safari, and every browser on iOS (they all run the system WebKit). */
function isWebKit(server: ServerObservedComponents): boolean {
  return server.browser === 'Safari' || server.browser === 'Mobile Safari' || server.os === 'iOS' || server.os === 'iPadOS';
}

function componentOf(fingerprint: DeviceFingerprint, key: string): string | undefined {
  const client = fingerprint.client;
  if (client?.kind !== 'components' || !Object.hasOwn(client.components, key)) return undefined;
  return client.components[key];
}

/** True when a similarity score reaches the match threshold (`score ≥ threshold`). */
export function matches(score: number, threshold: number): boolean {
  return score >= threshold;
}

/**
 * Sørensen–Dice coefficient on character bigrams (multiset), in [0, 1]: 1 for equal strings, close
 * to 1 after a small edit, low for unrelated strings. Linear in the input length, unlike
 * Levenshtein, so a 4 KiB opaque fingerprint costs little on every refresh. Strings shorter than
 * two characters have no bigrams and match only when equal.
 */
export function stringSimilarity(a: string, b: string): number {
  if (a === b) return 1;
  if (a.length < 2 || b.length < 2) return 0;
  const bigrams = new Map<string, number>();
  for (let i = 0; i < a.length - 1; i++) {
    const bigram = a.slice(i, i + 2);
    bigrams.set(bigram, (bigrams.get(bigram) ?? 0) + 1);
  }
  let shared = 0;
  for (let i = 0; i < b.length - 1; i++) {
    const bigram = b.slice(i, i + 2);
    const count = bigrams.get(bigram) ?? 0;
    if (count > 0) {
      bigrams.set(bigram, count - 1);
      shared++;
    }
  }
  return (2 * shared) / (a.length - 1 + (b.length - 1));
}

function clientWeight(key: string): number {
  return Object.hasOwn(FINGERPRINT_WEIGHTS.client, key)
    ? FINGERPRINT_WEIGHTS.client[key as KnownClientComponent]
    : FINGERPRINT_WEIGHTS.defaultClient;
}

function presentOrUndefined(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

function utf8Length(text: string): number {
  let bytes = 0;
  for (const char of text) {
    const codePoint = char.codePointAt(0) ?? 0;
    bytes += codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;
  }
  return bytes;
}

function codePointLength(text: string): number {
  return Array.from(text).length;
}
