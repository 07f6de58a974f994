import { createServer, request, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import express from 'express';
import { pino } from 'pino';
import { createAccessLog, loggerOptions } from '../../../src/adapters/http/logging/http-logger';
import { requestId } from '../../../src/adapters/http/middleware';
import { CapturedLogs } from '../../support/captured-logs';

describe('access log', () => {
  const logs = new CapturedLogs();
  let server: Server;
  let port: number;
  let answered: () => void = () => undefined;

  beforeAll(async () => {
    const app = express();
    app.use(requestId);
    app.use(createAccessLog(pino(loggerOptions({ logLevel: 'info' }), logs)));
    app.get('/quick', (_req, res) => res.json({ ok: true }));
    // Answers only when the test says so: long after the client has gone.
    app.get('/slow', (_req, res) => {
      answered = () => res.json({ late: true });
    });
    server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => new Promise<void>((resolve) => server.close(() => resolve())));

  const lineOf = async (id: string) => {
    for (let i = 0; i < 50; i++) {
      const line = logs.lines().find((l) => l.requestId === id && l.req);
      if (line) return line;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`no access-log line for ${id}`);
  };

  it('logs a finished request as completed, and one whose client went away as aborted', async () => {
    await new Promise<void>((resolve, reject) => {
      request({ port, path: '/quick?token=secret', headers: { 'X-Request-Id': 'quick-1' } }, (res) => res.resume().on('end', resolve))
        .on('error', reject)
        .end();
    });
    const quick = await lineOf('quick-1');
    expect(quick).toMatchObject({ msg: 'request completed', req: { method: 'GET', path: '/quick' }, res: { statusCode: 200 } });
    expect(quick.aborted).toBeUndefined();
    expect(JSON.stringify(quick)).not.toContain('secret');

    const client = request({ port, path: '/slow', headers: { 'X-Request-Id': 'slow-1' } });
    client.on('error', () => undefined);
    client.end();
    await new Promise((resolve) => setTimeout(resolve, 50));
    client.destroy();
    const slow = await lineOf('slow-1');
    expect(slow).toMatchObject({ msg: 'request aborted', aborted: true, req: { path: '/slow' } });
    answered();
  });
});
