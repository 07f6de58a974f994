/**
 * The first similarity rule, frozen for comparison in fingerprint-evaluation.spec.ts: every
 * component's mismatch counts on its own (Σ weight × match / Σ weight), with the weights it was
 * evaluated with. Not used by the service.
 */
import { DeviceFingerprint, ServerObservedComponents, stringSimilarity } from '../../../src/domain/session/device-fingerprint';

const CLIENT_WEIGHTS: Readonly<Record<string, number>> = {
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
};
const DEFAULT_CLIENT_WEIGHT = 1;
const OPAQUE_WEIGHT = 60;
const SERVER_WEIGHTS: Readonly<Record<keyof ServerObservedComponents, number>> = {
  browser: 3,
  browserMajor: 1,
  os: 3,
  osVersion: 1,
  deviceType: 2,
  acceptLanguage: 1,
  ipPrefix: 1.5,
};

export function similarityRound1(reference: DeviceFingerprint, observed: DeviceFingerprint): number {
  let total = 0;
  let matched = 0;
  const weigh = (weight: number, share: number): void => {
    total += weight;
    matched += weight * share;
  };
  if (reference.client !== null) {
    const refOpaque = reference.client.kind === 'opaque' ? reference.client.value : undefined;
    const obsOpaque = observed.client?.kind === 'opaque' ? observed.client.value : undefined;
    if (refOpaque !== undefined || obsOpaque !== undefined) {
      weigh(OPAQUE_WEIGHT, refOpaque !== undefined && obsOpaque !== undefined ? stringSimilarity(refOpaque, obsOpaque) : 0);
    }
    const refComponents = reference.client.kind === 'components' ? reference.client.components : {};
    const obsComponents = observed.client?.kind === 'components' ? observed.client.components : {};
    for (const key of new Set([...Object.keys(refComponents), ...Object.keys(obsComponents)])) {
      const a = Object.hasOwn(refComponents, key) ? refComponents[key] : undefined;
      const b = Object.hasOwn(obsComponents, key) ? obsComponents[key] : undefined;
      weigh(Object.hasOwn(CLIENT_WEIGHTS, key) ? CLIENT_WEIGHTS[key] : DEFAULT_CLIENT_WEIGHT, a !== undefined && a === b ? 1 : 0);
    }
  }
  for (const key of Object.keys(SERVER_WEIGHTS) as (keyof ServerObservedComponents)[]) {
    const a = reference.server[key] || undefined;
    const b = observed.server[key] || undefined;
    if (a === undefined && b === undefined) continue;
    weigh(SERVER_WEIGHTS[key], a === b ? 1 : 0);
  }
  if (total === 0) return 1;
  return Math.round((matched / total) * 1e6) / 1e6;
}
