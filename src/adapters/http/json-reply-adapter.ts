import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express, Response } from 'express';

const JSON_UTF8 = 'application/json; charset=utf-8';

/**
 * Nest's Express adapter, with the common answer written directly: a handler's plain object or
 * array becomes `JSON.stringify` text ended in one call (Node adds Content-Length), the same bytes
 * and headers `res.json` sends. Express's `res.json` → `res.send` would work out the charset by
 * parsing the Content-Type it has just set, look the type up again and copy the text into a
 * Buffer on every request; on `/me` that was about 4 % of the CPU. Everything else — no body,
 * strings, streams, errors, HEAD, 204/304, an answer that already chose its own Content-Type or
 * validators — goes through Nest's own path unchanged.
 */
export class JsonReplyExpressAdapter extends ExpressAdapter {
  /**
   * The HTTP server builds each request and response directly on the Express app's prototypes.
   * Express otherwise re-parents both objects (`Object.setPrototypeOf`) at the start of every
   * request; V8 then gives them new hidden classes, and in a steady stream of requests about a
   * tenth of what a request allocates ends up promoted to the old generation and collected there
   * by full mark-compacts. With the prototypes already in place Express's call changes nothing.
   * Other server options (HTTPS, 503 on closing, forced closing) keep Nest's own server.
   */
  override initHttpServer(options: NestApplicationOptions): void {
    if (options?.httpsOptions || options?.return503OnClosing || options?.forceCloseConnections) return super.initHttpServer(options);
    this.httpServer = createServer(expressMessageClasses(this.getInstance<Express>()), this.getInstance());
  }

  override reply(response: Response, body: unknown, statusCode?: number): unknown {
    if (!isPlainJson(body) || !this.isDirectJsonAnswer(response, statusCode)) return super.reply(response, body, statusCode);
    if (statusCode !== undefined) response.statusCode = statusCode;
    response.setHeader('Content-Type', JSON_UTF8);
    response.end(JSON.stringify(body));
    return response;
  }

  private isDirectJsonAnswer(response: Response, statusCode: number | undefined): boolean {
    const status = statusCode ?? response.statusCode;
    return (
      status !== 204 &&
      status !== 304 &&
      response.req.method !== 'HEAD' &&
      !response.headersSent &&
      response.getHeader('Content-Type') === undefined &&
      response.getHeader('ETag') === undefined &&
      response.getHeader('Last-Modified') === undefined
    );
  }
}

/** A plain object or array: what `res.json` would serialise as is. */
function isPlainJson(body: unknown): body is object {
  if (body === null || typeof body !== 'object') return false;
  if (Array.isArray(body)) return true;
  const proto = Object.getPrototypeOf(body) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Node's request and response constructors, with the app's `request`/`response` objects as their prototypes. */
function expressMessageClasses(app: Express): { IncomingMessage: typeof IncomingMessage; ServerResponse: typeof ServerResponse } {
  return { IncomingMessage: withPrototype(IncomingMessage, app.request), ServerResponse: withPrototype(ServerResponse, app.response) };
}

/**
 * A function constructor that runs `Base` on the new object and gives it `prototype`: a class's
 * `prototype` cannot be replaced, and Express compares prototypes by identity. Node's request and
 * response constructors take at most two arguments.
 */
function withPrototype<T>(Base: T, prototype: object): T {
  const base = Base as unknown as (this: unknown, a?: unknown, b?: unknown) => void;
  const Built = function (this: unknown, a?: unknown, b?: unknown) {
    base.call(this, a, b);
  };
  Built.prototype = prototype;
  return Built as unknown as T;
}
