import { Injectable } from '@nestjs/common';
import { UAParser } from 'ua-parser-js';
import { Bots, CLIs, Crawlers, Fetchers, InApps, Libraries } from 'ua-parser-js/extensions';
import type { DeviceType } from '../../domain/session/device-fingerprint';
import { DetectedDevice, DeviceDetector } from '../../application/ports/device-detector';

// Without these extensions ua-parser-js recognises browsers only: curl, HTTP libraries and
// crawlers would come back empty, and desktop apps (Slack, VS Code) as plain Chrome.
const EXTENSIONS = [CLIs, Fetchers, Libraries, Crawlers, Bots, InApps].flat();
const AUTOMATED_CLIENTS: ReadonlySet<string> = new Set(['cli', 'library', 'fetcher', 'crawler']);
const HANDHELD_DEVICES: ReadonlySet<string> = new Set(['mobile', 'tablet', 'wearable']);

@Injectable()
export class UaParserDeviceDetector extends DeviceDetector {
  override detect(userAgent: string | undefined): DetectedDevice {
    const header = userAgent?.trim();
    if (!header) return { deviceType: 'unknown', name: 'Unknown device' };

    const { browser, os, device } = new UAParser(header, EXTENSIONS).getResult();
    const detected: DetectedDevice = { deviceType: 'unknown', name: 'Unknown device' };
    if (browser.name) detected.browser = browser.name;
    if (browser.major) detected.browserMajor = browser.major;
    if (os.name) detected.os = os.name;
    if (os.version) detected.osVersion = os.version;
    detected.deviceType = deviceType(browser.name, browser.type, device.type);
    detected.name = deviceName(detected);
    return detected;
  }
}

function deviceType(browserName?: string, browserType?: string, hardware?: string): DeviceType {
  if (browserType && AUTOMATED_CLIENTS.has(browserType)) return 'api';
  if (hardware && HANDHELD_DEVICES.has(hardware)) return 'mobile';
  // ua-parser-js names a bare Electron shell "Electron" and a known one (Slack, VS Code) as in-app.
  if (browserName === 'Electron' || browserType === 'inapp') return 'desktop';
  if (browserName) return 'browser';
  return 'unknown';
}

function deviceName({ browser, browserMajor, os }: DetectedDevice): string {
  const client = browser && browserMajor ? `${browser} ${browserMajor}` : browser;
  if (client && os) return `${client} on ${os}`;
  if (client) return client;
  if (os) return `${os} device`;
  return 'Unknown device';
}
