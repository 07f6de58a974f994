import { UaParserDeviceDetector } from '../../../src/adapters/device/ua-parser-device-detector';
import { DeviceDetector } from '../../../src/application/ports/device-detector';

const UA = {
  chromeMac: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  firefoxWindows: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0',
  edgeWindows:
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0',
  safariIphone:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
  safariIpad:
    'Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
  chromeAndroid: 'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
  slackWindows:
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Slack/4.41.105 Chrome/128.0.6613.186 Electron/32.2.0 Safari/537.36',
  electronMac:
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) MyApp/1.2.3 Chrome/128.0.6613.186 Electron/32.2.1 Safari/537.36',
};

describe('UaParserDeviceDetector', () => {
  const detector: DeviceDetector = new UaParserDeviceDetector();

  it('names a desktop browser "<browser> <major> on <os>" with type browser', () => {
    expect(detector.detect(UA.chromeMac)).toEqual({
      browser: 'Chrome',
      browserMajor: '131',
      os: 'macOS',
      osVersion: '10.15.7',
      deviceType: 'browser',
      name: 'Chrome 131 on macOS',
    });
    expect(detector.detect(UA.firefoxWindows)).toMatchObject({ deviceType: 'browser', name: 'Firefox 133 on Windows' });
    expect(detector.detect(UA.edgeWindows)).toMatchObject({ browser: 'Edge', name: 'Edge 131 on Windows' });
  });

  it.each([
    ['an iPhone', UA.safariIphone, 'Mobile Safari 17 on iOS'],
    ['an iPad', UA.safariIpad, 'Mobile Safari 17 on iOS'],
    ['an Android phone', UA.chromeAndroid, 'Chrome 131 on Android'],
  ])('reports %s as mobile', (_device, userAgent, name) => {
    expect(detector.detect(userAgent)).toMatchObject({ deviceType: 'mobile', name });
  });

  it.each([
    ['Slack (a known Electron app)', UA.slackWindows],
    ['an unknown Electron app', UA.electronMac],
  ])('reports %s as a desktop app', (_app, userAgent) => {
    expect(detector.detect(userAgent).deviceType).toBe('desktop');
  });

  it.each([
    ['curl', 'curl/8.4.0', 'curl 8'],
    ['Postman', 'PostmanRuntime/7.42.0', 'PostmanRuntime 7'],
    ['python-requests', 'python-requests/2.32.3', 'python-requests 2'],
    ['axios', 'axios/1.7.7', 'axios 1'],
    ['Go', 'Go-http-client/2.0', 'Go-http-client 2'],
    ['okhttp', 'okhttp/4.12.0', 'okhttp 4'],
    ['a crawler', 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', 'Googlebot 2'],
    ['Wget', 'Wget/1.21.4', 'Wget 1'],
    ['Java', 'Java/17.0.9', 'Java 17'],
    ['Apache HttpClient', 'Apache-HttpClient/4.5.14 (Java/17.0.9)', 'Apache-HttpClient 4'],
    [
      'a crawler posing as a phone',
      'Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.69 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
      'Googlebot 2 on Android',
    ],
  ])('reports %s as an api client', (_client, userAgent, name) => {
    expect(detector.detect(userAgent)).toMatchObject({ deviceType: 'api', name });
  });

  it.each([
    ['no header', undefined],
    ['an empty header', ''],
    ['a blank header', '   '],
    ['an unrecognised header', 'totally-unknown-thing'],
  ])('reports %s as "Unknown device" of type unknown', (_case, userAgent) => {
    expect(detector.detect(userAgent)).toEqual({ deviceType: 'unknown', name: 'Unknown device' });
  });

  it('names a device whose OS is known but browser is not after its OS', () => {
    expect(detector.detect('Dalvik/2.1.0 (Linux; U; Android 14; Pixel 8 Build/AP2A)')).toMatchObject({
      os: 'Android',
      deviceType: 'mobile',
      name: 'Android device',
    });
  });

  it('does not throw on a very long header', () => {
    expect(() => detector.detect(`${UA.chromeMac} ${'x'.repeat(100_000)}`)).not.toThrow();
  });

  it('answers quickly on headers built to make its patterns backtrack', () => {
    const started = process.hrtime.bigint();
    for (const header of ['bot'.repeat(30_000), ` ${'a.'.repeat(50_000)}`, `curl${'/1'.repeat(50_000)}`]) detector.detect(header);
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(500);
  });

  it('does not take a browser whose User-Agent merely contains a product token for an api client', () => {
    expect(detector.detect(UA.firefoxWindows).deviceType).toBe('browser');
    expect(detector.detect(`${UA.chromeMac} curl/8.4.0`).deviceType).toBe('browser');
  });

  it('answers a header seen before the same way, with an object of its own', () => {
    const fresh = new UaParserDeviceDetector();
    const first = fresh.detect(UA.chromeMac);
    first.name = 'changed by a caller';
    delete first.os;
    const again = fresh.detect(`  ${UA.chromeMac} `);
    expect(again).toEqual(new UaParserDeviceDetector().detect(UA.chromeMac));
    expect(again).toMatchObject({ browser: 'Chrome', os: 'macOS', deviceType: 'browser' });
    expect(again.name).not.toBe('changed by a caller');
  });
});
