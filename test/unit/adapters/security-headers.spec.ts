import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import helmet from 'helmet';
import { fixedHeaders, securityHeaders } from '../../../src/adapters/http/security-headers';

/** A real Node response (nothing is sent: headers are only stored until the first write). */
function response(): ServerResponse {
  const req = new IncomingMessage(new Socket());
  const res = new ServerResponse(req);
  res.setHeader('X-Powered-By', 'Express');
  return res;
}

function run(middleware: RequestHandler, path: string): ServerResponse {
  const res = response();
  let passed = false;
  middleware(
    { path } as Request,
    res as unknown as Response,
    ((error?: unknown) => {
      if (error) throw error;
      passed = true;
    }) as NextFunction,
  );
  expect(passed).toBe(true);
  return res;
}

describe('security headers', () => {
  it('sets what helmet itself sets, on API answers and on the API docs', () => {
    const api = helmet({
      contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    });
    const direct = run(api, '/api/v1/auth/me');
    const fixed = response();
    fixedHeaders(api)(fixed as unknown as Response);
    expect(fixed.getHeaders()).toEqual(direct.getHeaders());
    expect(fixed.getHeader('x-powered-by')).toBeUndefined();
    expect(Object.keys(fixed.getHeaders()).length).toBeGreaterThan(10);

    const answer = run(securityHeaders(), '/api/v1/auth/me');
    expect(answer.getHeader('content-security-policy')).toBe("default-src 'none';frame-ancestors 'none'");
    expect(answer.getHeader('x-frame-options')).toBe('DENY');
    expect(answer.getHeader('referrer-policy')).toBe('no-referrer');
    expect(answer.getHeader('x-powered-by')).toBeUndefined();
    expect(run(securityHeaders(), '/docs/swagger-ui.css').getHeader('content-security-policy')).toContain("script-src 'self'");
  });

  it('refuses a middleware that fails or does not finish at once', () => {
    const failing: RequestHandler = (_req, _res, next) => next(new Error('no'));
    expect(() => fixedHeaders(failing)).toThrow('no');
    const later: RequestHandler = (_req, _res, next) => void setTimeout(next, 0);
    expect(() => fixedHeaders(later)).toThrow(/did not finish/);
  });
});
