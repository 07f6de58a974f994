import { IncomingMessage, type Server } from 'node:http';
import express from 'express';
import { ExpressAdapter } from '@nestjs/platform-express';
import request from 'supertest';
import { JsonReplyExpressAdapter } from '../../../src/adapters/http/json-reply-adapter';

type Reply = { body: unknown; status?: number; before?: (res: express.Response) => void };

/** An Express app answering every request through `adapter.reply`, as Nest's router does. */
function appWith(adapter: ExpressAdapter, reply: Reply): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.all('/', (_req, res) => {
    reply.before?.(res);
    adapter.reply(res, reply.body, reply.status);
  });
  return app;
}

/** What a client sees: status, headers (but the date) and the exact bytes. */
async function answer(app: express.Express, method: 'get' | 'head' | 'post') {
  const res = await request(app)
    [method]('/')
    .buffer(true)
    .parse((r, done) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('end', () => done(null, Buffer.concat(chunks)));
    });
  const headers = { ...res.headers };
  delete headers.date;
  return { status: res.status, headers, bytes: (res.body as Buffer).toString('hex') };
}

describe('JsonReplyExpressAdapter answers exactly as Nest’s Express adapter', () => {
  const cases: [string, Reply, 'get' | 'head' | 'post'][] = [
    ['a plain object', { body: { user: { id: 'u1', name: 'Zoë 🙂', roles: [], at: new Date(0), n: null } } }, 'get'],
    ['an array', { body: [1, 'two', { three: 3 }] }, 'get'],
    ['an object with a status', { body: { created: true }, status: 201 }, 'post'],
    ['a null-prototype object', { body: Object.assign(Object.create(null) as object, { a: 1 }) }, 'get'],
    ['a large object (over 1000 bytes)', { body: { list: Array.from({ length: 80 }, (_, i) => ({ i, s: 'x'.repeat(10) })) } }, 'get'],
    ['HEAD', { body: { user: { id: 'u1' } } }, 'head'],
    ['204 with a body', { body: { ignored: true }, status: 204 }, 'post'],
    ['no body', { body: undefined, status: 204 }, 'post'],
    ['a string', { body: 'plain text' }, 'get'],
    [
      'a class instance',
      {
        body: new (class Box {
          value = 1;
        })(),
      },
      'get',
    ],
    ['an error with an error status', { body: new Error('boom'), status: 500 }, 'get'],
    [
      'a Content-Type already chosen',
      { body: { a: 1 }, before: (res) => res.setHeader('Content-Type', 'application/problem+json') },
      'get',
    ],
    ['an ETag already set', { body: { a: 1 }, before: (res) => res.setHeader('ETag', '"v1"') }, 'get'],
  ];

  it.each(cases)('%s', async (_name, reply, method) => {
    const expected = await answer(appWith(new ExpressAdapter(), reply), method);
    const actual = await answer(appWith(new JsonReplyExpressAdapter(), reply), method);
    expect(actual).toEqual(expected);
  });

  it('writes a plain object itself rather than through res.json', () => {
    const adapter = new JsonReplyExpressAdapter();
    const calls: string[] = [];
    const res = {
      statusCode: 200,
      headersSent: false,
      req: { method: 'GET' },
      getHeader: () => undefined,
      setHeader: (name: string, value: string) => calls.push(`${name}: ${value}`),
      end: (text: string) => calls.push(`end ${text}`),
      json: () => calls.push('json'),
    } as unknown as express.Response;
    adapter.reply(res, { a: 1 }, 201);
    expect(calls).toEqual(['Content-Type: application/json; charset=utf-8', 'end {"a":1}']);
    expect(res.statusCode).toBe(201);
  });
});

describe('JsonReplyExpressAdapter’s HTTP server', () => {
  it('builds requests and responses on the Express app’s own prototypes, so Express never re-parents them', async () => {
    const adapter = new JsonReplyExpressAdapter();
    adapter.initHttpServer({});
    const app = adapter.getInstance<express.Express>();
    const seen: { req?: object; res?: object; afterExpress?: object } = {};
    const server = adapter.getHttpServer() as Server;
    server.prependListener('request', (req, res) => {
      seen.req = Object.getPrototypeOf(req) as object;
      seen.res = Object.getPrototypeOf(res) as object;
    });
    app.get('/', (req, res) => {
      seen.afterExpress = Object.getPrototypeOf(req) as object;
      res.json({ ok: req.get('x-probe') });
    });
    const res = await request(server).get('/').set('X-Probe', 'yes');
    expect(res.body).toEqual({ ok: 'yes' });
    expect(seen.req).toBe(app.request);
    expect(seen.res).toBe(app.response);
    expect(seen.afterExpress).toBe(app.request);
  });

  it('keeps Nest’s own server for other server options', async () => {
    const adapter = new JsonReplyExpressAdapter();
    adapter.initHttpServer({ forceCloseConnections: true });
    const server = adapter.getHttpServer() as Server;
    let seen: object | undefined;
    server.prependListener('request', (req) => (seen = Object.getPrototypeOf(req) as object));
    adapter.getInstance<express.Express>().get('/', (_req, res) => res.json({}));
    expect((await request(server).get('/')).status).toBe(200);
    expect(seen).toBe(IncomingMessage.prototype);
  });
});
