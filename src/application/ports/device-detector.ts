import type { DeviceType } from '../../domain/session/device-fingerprint';

/** What a User-Agent header says about the device (Session `device`). */
export interface DetectedDevice {
  /** Browser or client family, e.g. "Chrome", "Mobile Safari", "curl"; absent when unknown. */
  browser?: string;
  /** Major version of the browser or client, e.g. "131". */
  browserMajor?: string;
  /** OS family, e.g. "macOS", "Windows", "iOS", "Android". */
  os?: string;
  /** OS version as the User-Agent reports it (often frozen, e.g. "10.15.7" on macOS). */
  osVersion?: string;
  deviceType: DeviceType;
  /** Human-readable name, e.g. "Chrome 131 on macOS", or "Unknown device". */
  name: string;
}

export abstract class DeviceDetector {
  /**
   * Parses a User-Agent header. Never throws: an absent, empty or unrecognised header gives
   * `{ deviceType: 'unknown', name: 'Unknown device' }`.
   */
  abstract detect(userAgent: string | undefined): DetectedDevice;
}
