import { Injectable } from '@nestjs/common';
import { DeviceFingerprint, observeServerComponents, parseClientFingerprint } from '../../domain/session/device-fingerprint';
import { SessionDevice } from '../../domain/session/session';
import { DetectedDevice, DeviceDetector } from '../ports/device-detector';
import { ClientContext } from './client-context';

export interface DeviceObservation {
  fingerprint: DeviceFingerprint;
  detected: DetectedDevice;
}

/** Turns a request's client context into the fingerprint compared for hijack detection and the device shown in sessions. */
@Injectable()
export class DeviceObserver {
  constructor(private readonly detector: DeviceDetector) {}

  /** @throws DomainError VALIDATION_FAILED for a malformed fingerprint */
  observe(client: ClientContext): DeviceObservation {
    const clientFingerprint = parseClientFingerprint(client.fingerprint);
    const detected = this.detector.detect(client.userAgent ?? undefined);
    const fingerprint: DeviceFingerprint = {
      client: clientFingerprint,
      server: observeServerComponents({
        browser: detected.browser,
        browserMajor: detected.browserMajor,
        os: detected.os,
        osVersion: detected.osVersion,
        deviceType: detected.deviceType,
        acceptLanguage: client.acceptLanguage ?? undefined,
        ip: client.ip,
      }),
    };
    return { fingerprint, detected };
  }

  device(observation: DeviceObservation, client: ClientContext, id: string): SessionDevice {
    return { id, name: observation.detected.name, type: observation.detected.deviceType, fingerprint: client.fingerprint || null };
  }
}
