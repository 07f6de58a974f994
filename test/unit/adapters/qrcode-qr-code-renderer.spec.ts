import { Worker } from 'node:worker_threads';
import jsQR from 'jsqr';
import { PNG } from 'pngjs';
import { QrcodeQrCodeRenderer } from '../../../src/adapters/mfa/qrcode-qr-code-renderer';

/** What a phone's camera would read from the image: decoded by jsQR, a decoder independent of qrcode. */
function scan(dataUrl: string): { text: string | null; width: number; height: number } {
  const prefix = 'data:image/png;base64,';
  expect(dataUrl.startsWith(prefix)).toBe(true);
  const png = PNG.sync.read(Buffer.from(dataUrl.slice(prefix.length), 'base64'));
  const code = jsQR(new Uint8ClampedArray(png.data), png.width, png.height);
  return { text: code?.data ?? null, width: png.width, height: png.height };
}

describe('QrcodeQrCodeRenderer (worker thread)', () => {
  const renderer = new QrcodeQrCodeRenderer();
  afterAll(() => renderer.onModuleDestroy());

  const uri = (n: number) => `otpauth://totp/Acme%20Corp:user${n}%40example.com?secret=JBSWY3DPEHPK3PXP${n}&issuer=Acme%20Corp`;

  it('draws a 256-pixel PNG that scans back to the otpauth URI', async () => {
    const scanned = scan(await renderer.pngDataUrl(uri(1)));
    expect(scanned).toEqual({ text: uri(1), width: 256, height: 256 });
  });

  it('answers concurrent requests each with its own image', async () => {
    const urls = await Promise.all([2, 3, 4].map((n) => renderer.pngDataUrl(uri(n))));
    expect(urls.map((url) => scan(url).text)).toEqual([uri(2), uri(3), uri(4)]);
  });

  it('starts again after being stopped, and fails what was in flight when stopped', async () => {
    const inFlight = renderer.pngDataUrl(uri(5));
    await renderer.onModuleDestroy();
    await expect(inFlight).rejects.toThrow('stopped');
    expect(scan(await renderer.pngDataUrl(uri(6))).text).toBe(uri(6));
  });

  it('ends the thread only once it has finished the image it was drawing (terminating mid-compression aborts the process)', async () => {
    const inFlight = renderer.pngDataUrl(uri(7));
    const worker = (renderer as unknown as { worker: Worker }).worker;
    const events: string[] = [];
    worker.on('message', () => events.push('answered'));
    worker.on('exit', () => events.push('exited'));
    const refused = expect(inFlight).rejects.toThrow('stopped');
    await renderer.onModuleDestroy();
    await refused;
    expect(events).toEqual(['answered', 'exited']);
  });
});
