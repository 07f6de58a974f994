import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { Worker } from 'node:worker_threads';
import { QrCodeRenderer } from '../../application/ports/qr-code-renderer';

/** How long the worker stays after its last image; the next enrolment starts another (~50 ms). */
const IDLE_MS = 60_000;
/** How long a stop waits for the images the worker is still drawing before it ends the thread anyway. */
const DRAIN_MS = 2_000;

/**
 * The worker's whole program: qrcode (its path passed in, so it resolves wherever the service is
 * installed) answering `{ id, text }` with `{ id, url }` or `{ id, error }`.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const QRCode = require(workerData.qrcode);
parentPort.on('message', ({ id, text }) => {
  QRCode.toDataURL(text, { type: 'image/png', errorCorrectionLevel: 'M', margin: 2, width: 256 }).then(
    (url) => parentPort.postMessage({ id, url }),
    (error) => parentPort.postMessage({ id, error: String(error && error.message || error) }),
  );
});`;

interface Pending {
  resolve: (url: string) => void;
  reject: (error: Error) => void;
}

/**
 * QR codes drawn by qrcode in a worker thread. Encoding the 256-pixel PNG (pngjs tries five row
 * filters on every row) takes ~10 ms of CPU; on the event loop that would stall every other
 * request for as long. The worker starts with the first enrolment, serves the ones after it and
 * ends after a minute without work, so an instance that never enrols holds neither the worker
 * nor the libraries.
 */
@Injectable()
export class QrcodeQrCodeRenderer implements QrCodeRenderer, OnModuleDestroy {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private idleTimer: NodeJS.Timeout | null = null;

  pngDataUrl(text: string): Promise<string> {
    const worker = this.running();
    const id = this.nextId++;
    return new Promise<string>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, text });
    });
  }

  async onModuleDestroy(): Promise<void> {
    await this.stop(new Error('The QR code renderer stopped'));
  }

  private running(): Worker {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { qrcode: require.resolve('qrcode') } });
    worker.unref();
    worker.on('message', (message: { id: number; url?: string; error?: string }) => {
      const waiting = this.pending.get(message.id);
      if (!waiting) return;
      this.pending.delete(message.id);
      if (message.url !== undefined) waiting.resolve(message.url);
      else waiting.reject(new Error(`QR code rendering failed: ${message.error}`));
      if (this.pending.size === 0) this.scheduleIdleStop();
    });
    worker.on('error', (error) => void this.stop(error));
    worker.on('exit', () => {
      if (this.worker === worker) void this.stop(new Error('The QR code worker exited'));
    });
    this.worker = worker;
    return worker;
  }

  private scheduleIdleStop(): void {
    this.idleTimer = setTimeout(() => void this.stop(new Error('The QR code renderer stopped')), IDLE_MS);
    this.idleTimer.unref();
  }

  /**
   * Ends the worker; whatever it had not answered fails with `reason` at once. The thread itself
   * ends once it has finished the images it was drawing: a worker terminated in the middle of
   * its PNG compression aborts the whole process (Node's zlib asserts on a stream closed before
   * its initialisation completed).
   */
  private async stop(reason: Error): Promise<void> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    const worker = this.worker;
    this.worker = null;
    const drawing = this.pending.size;
    for (const waiting of this.pending.values()) waiting.reject(reason);
    this.pending.clear();
    if (!worker) return;
    if (drawing > 0) await answered(worker, drawing, DRAIN_MS);
    await worker.terminate();
  }
}

/** Resolves once `worker` has sent `count` more messages, has exited, or `timeoutMs` has passed. */
function answered(worker: Worker, count: number, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    let left = count;
    const done = (): void => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('exit', done);
      resolve();
    };
    const onMessage = (): void => {
      if (--left === 0) done();
    };
    const timer = setTimeout(done, timeoutMs);
    worker.on('message', onMessage);
    worker.on('exit', done);
  });
}
