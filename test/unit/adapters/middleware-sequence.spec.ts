import express from 'express';
import type { RequestHandler } from 'express';
import request from 'supertest';
import { inSequence, noStore, under } from '../../../src/adapters/http/middleware';

const mark =
  (name: string): RequestHandler =>
  (_req, res, next) => {
    res.append('X-Ran', name);
    next();
  };

function appWith(...handlers: RequestHandler[]) {
  const app = express();
  app.use(inSequence(...handlers));
  app.get(/.*/, (_req, res) => res.json({ reached: true }));
  app.use(((error, _req, res, _next) => {
    res.status(500).json({ error: String((error as Error).message ?? error) });
  }) as express.ErrorRequestHandler);
  return app;
}

describe('inSequence', () => {
  it('runs the middleware in order, then the routes', async () => {
    const res = await request(appWith(mark('a'), mark('b'), mark('c'))).get('/x');
    expect(res.status).toBe(200);
    expect(res.headers['x-ran']).toBe('a, b, c');
    expect(res.body).toEqual({ reached: true });
  });

  it('hands next(error) and a throw to the error handlers and skips the rest', async () => {
    const failing: RequestHandler = (_req, _res, next) => next(new Error('refused'));
    const throwing: RequestHandler = () => {
      throw new Error('thrown');
    };
    const viaNext = await request(appWith(mark('a'), failing, mark('never'))).get('/x');
    expect(viaNext.status).toBe(500);
    expect(viaNext.body).toEqual({ error: 'refused' });
    expect(viaNext.headers['x-ran']).toBe('a');
    const viaThrow = await request(appWith(throwing, mark('never'))).get('/x');
    expect(viaThrow.status).toBe(500);
    expect(viaThrow.body).toEqual({ error: 'thrown' });
    expect(viaThrow.headers['x-ran']).toBeUndefined();
  });

  it('lets a middleware answer without calling next', async () => {
    const answering: RequestHandler = (_req, res) => {
      res.status(204).end();
    };
    const res = await request(appWith(answering, mark('never'))).get('/x');
    expect(res.status).toBe(204);
    expect(res.headers['x-ran']).toBeUndefined();
  });
});

describe('under', () => {
  const app = appWith(under(['/api', '/v1'], noStore));
  it.each(['/api', '/api/', '/api/v1/auth/me', '/API/v1/x', '/v1/admin/users?limit=5', '/api?x=1'])('applies to %s', async (path) => {
    const res = await request(app).get(path);
    expect(res.headers['cache-control']).toBe('no-store');
  });
  it.each(['/apis', '/health/ready', '/docs', '/v10/x', '/', '/x/api'])('leaves %s alone', async (path) => {
    const res = await request(app).get(path);
    expect(res.headers['cache-control']).toBeUndefined();
  });
});
