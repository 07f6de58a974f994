import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { UAParser } from 'ua-parser-js';
import type { DeviceType } from '../../domain/session/device-fingerprint';
import { DetectedDevice, DeviceDetector } from '../../application/ports/device-detector';

/**
 * Well-known non-browser clients, recognised by the product token that starts their User-Agent
 * (`curl/8.4.0`, `python-requests/2.32.3`). ua-parser-js (the MIT-licensed 1.x line) recognises
 * browsers only, so without this list an API client would come back as an unknown device. The
 * name is reported as the client spells it. Extend the list when a client shows up as unknown.
 */
const API_CLIENT_PREFIXES = [
  // command-line tools and API workbenches
  'curl',
  'Wget',
  'HTTPie',
  'xh',
  'PostmanRuntime',
  'insomnia',
  'Bruno',
  'k6',
  'ApacheBench',
  // HTTP libraries
  'python-requests',
  'python-httpx',
  'Python-urllib',
  'aiohttp',
  'urllib3',
  'axios',
  'node-fetch',
  'undici',
  'node',
  'Deno',
  'Bun',
  'Go-http-client',
  'okhttp',
  'Java',
  'Apache-HttpClient',
  'Jakarta Commons-HttpClient',
  'ReactorNetty',
  'Dart',
  'RestSharp',
  'Faraday',
  'rest-client',
  'GuzzleHttp',
  'Symfony HttpClient',
  'PHP',
  'libwww-perl',
  'reqwest',
  'hyper',
] as const;

const API_CLIENT = new RegExp(`^(${API_CLIENT_PREFIXES.map(escapeRegExp).join('|')})/v?(\\d[\\w.]*)`, 'i');

/**
 * Crawlers and monitors announce themselves with a product token containing "bot", "crawler" or
 * "spider" (`Googlebot/2.1`, `bingbot/2.0`, `AhrefsBot/7.0`), usually inside `(compatible; …)`.
 */
const CRAWLER = /(?:^|[\s;(])([\w-]*(?:bot|crawler|spider)[\w-]*|facebookexternalhit)\/v?(\d[\w.]*)/i;

/** Names ua-parser-js 1.x spells differently from the API's examples ("Chrome 131 on macOS"). */
const OS_NAMES: Readonly<Record<string, string>> = { 'Mac OS': 'macOS', 'Chromium OS': 'ChromeOS' };

/** ua-parser-js 1.x reads the first 500 characters too; real User-Agents are far shorter. */
const MAX_PARSED_LENGTH = 500;

const HANDHELD_DEVICES: ReadonlySet<string> = new Set(['mobile', 'tablet', 'wearable']);

/** User-Agent → browser, OS, device type and name, with ua-parser-js (MIT, 1.x) plus the lists above. */
@Injectable()
export class UaParserDeviceDetector extends DeviceDetector {
  /** A client sends the same header on every call: parsing it (dozens of patterns) is done once. */
  private readonly parsed = new LRUCache<string, Readonly<DetectedDevice>>({ max: 2000 });

  override detect(userAgent: string | undefined): DetectedDevice {
    // Bounded, so the patterns above stay linear-time on any header a client can send.
    const header = userAgent?.trim().slice(0, MAX_PARSED_LENGTH);
    if (!header) return { deviceType: 'unknown', name: 'Unknown device' };
    let detected = this.parsed.get(header);
    if (!detected) {
      detected = parse(header);
      this.parsed.set(header, detected);
    }
    return { ...detected };
  }
}

/** User-Agent → device, uncached. */
function parse(header: string): DetectedDevice {
  const detected: DetectedDevice = { deviceType: 'unknown', name: 'Unknown device' };
  const automated = API_CLIENT.exec(header) ?? CRAWLER.exec(header);
  const { browser, os, device } = new UAParser(header).getResult();
  if (automated) {
    detected.browser = automated[1];
    detected.browserMajor = automated[2].split('.')[0];
  } else {
    if (browser.name) detected.browser = browser.name;
    if (browser.major) detected.browserMajor = browser.major;
  }
  if (os.name) detected.os = OS_NAMES[os.name] ?? os.name;
  if (os.version) detected.osVersion = os.version;
  detected.deviceType = automated ? 'api' : deviceType(browser.name, device.type, detected.os);
  detected.name = deviceName(detected);
  return detected;
}

function deviceType(browserName: string | undefined, hardware: string | undefined, os: string | undefined): DeviceType {
  if (hardware && HANDHELD_DEVICES.has(hardware)) return 'mobile';
  // Electron apps (Slack, VS Code, Teams …) carry an `Electron/<version>` token.
  if (browserName === 'Electron') return 'desktop';
  if (browserName) return 'browser';
  // An app's own HTTP stack on a phone (Android's Dalvik, iOS apps) names the OS but no browser.
  if (os === 'Android' || os === 'iOS') return 'mobile';
  return 'unknown';
}

function deviceName({ browser, browserMajor, os }: DetectedDevice): string {
  const client = browser && browserMajor ? `${browser} ${browserMajor}` : browser;
  if (client && os) return `${client} on ${os}`;
  if (client) return client;
  if (os) return `${os} device`;
  return 'Unknown device';
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
