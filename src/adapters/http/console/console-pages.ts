import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, relative, sep } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * The console's Content-Security-Policy: every script, style and request from this origin only, no
 * inline script or style, no plugins, no framing; `data:` images for the TOTP QR code. DOM sinks
 * that would turn strings into script (innerHTML and the like) are closed by Trusted Types.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join('; ');

/** The paths that answer the console's page; the script renders the view that belongs to each. */
export const CONSOLE_PAGES = ['/account/', '/account/invitation', '/verify-email', '/reset-password'];
/** Where the built scripts and styles are served; their names carry a content hash. */
export const CONSOLE_ASSETS = '/account/assets/';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.txt': 'text/plain; charset=utf-8',
};

/** The page's placeholder for the realm's display name, filled in per request. */
export const REALM_NAME_META = '<meta name="realm-name" content="" />';
const REALM_ID = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** The display name of a realm, or null when there is no such realm. */
export type RealmNameLookup = (realmId: string) => Promise<string | null>;

const escapeAttribute = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

interface Asset {
  type: string;
  body: Buffer;
  gzip: Buffer | null;
  etag: string;
}

function asset(path: string): Asset {
  return assetOf(readFileSync(path), TYPES[extname(path)] ?? 'application/octet-stream');
}

function assetOf(body: Buffer, type: string): Asset {
  const gzip = /^(text\/|image\/svg)/.test(type) && body.length > 512 ? gzipSync(body, { level: 9 }) : null;
  return { type, body, gzip, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** The folder of the built console: `dist/console` beside the package.json the service runs from. */
export function builtConsoleDir(from: string = __dirname): string {
  let dir = from;
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return join(dir, 'dist', 'console');
}

/**
 * The built account console (npm run build writes it to dist/console), held in memory: a few
 * kilobytes. The page is revalidated on every load; the hashed assets are cached for a year.
 */
export class ConsolePages {
  private constructor(
    private readonly page: Asset,
    private readonly assets: Map<string, Asset>,
  ) {}

  /** Reads a built console; null when `dir` holds none. */
  static load(dir: string): ConsolePages | null {
    const index = join(dir, 'index.html');
    if (!existsSync(index)) return null;
    const assetsDir = join(dir, 'assets');
    const assets = new Map<string, Asset>();
    if (existsSync(assetsDir)) {
      for (const file of filesUnder(assetsDir)) assets.set(relative(assetsDir, file).split(sep).join('/'), asset(file));
    }
    return new ConsolePages(asset(index), assets);
  }

  /** Names of the served assets (for tests and size reports). */
  assetNames(): string[] {
    return [...this.assets.keys()];
  }

  /**
   * The page for the realm of `?realm=` (default `default`), its display name in the
   * `realm-name` meta element, so every page names the realm without a request of its own. One
   * rendering per name is kept (names change rarely; at most 100 kept).
   */
  private readonly rendered = new Map<string, Asset>();
  private async pageFor(req: Request, realmName?: RealmNameLookup): Promise<Asset> {
    const asked = typeof req.query.realm === 'string' && REALM_ID.test(req.query.realm) ? req.query.realm : 'default';
    const name = (realmName && (await realmName(asked).catch(() => null))) ?? asked;
    let page = this.rendered.get(name);
    if (!page) {
      const html = this.page.body
        .toString('utf8')
        .replace(REALM_NAME_META, `<meta name="realm-name" content="${escapeAttribute(name)}" />`);
      page = assetOf(Buffer.from(html, 'utf8'), this.page.type);
      if (this.rendered.size >= 100) this.rendered.delete(this.rendered.keys().next().value as string);
      this.rendered.set(name, page);
    }
    return page;
  }

  /** Answers GET and HEAD of the console's paths; anything else goes on to the API (and its 404). */
  handler(realmName?: RealmNameLookup): RequestHandler {
    return (req: Request, res: Response, next: NextFunction) => {
      const path = req.path;
      if (path === '/account') {
        // Relative URLs of the page resolve against /account/.
        const query = req.originalUrl.indexOf('?');
        res.redirect(301, `/account/${query >= 0 ? req.originalUrl.slice(query) : ''}`);
        return;
      }
      if (CONSOLE_PAGES.includes(path)) {
        res.setHeader('Content-Security-Policy', CONSOLE_CSP);
        res.setHeader('Cache-Control', 'no-cache');
        this.pageFor(req, realmName).then((page) => this.send(req, res, page), next);
        return;
      }
      const found = path.startsWith(CONSOLE_ASSETS) ? this.assets.get(path.slice(CONSOLE_ASSETS.length)) : undefined;
      if (!found) {
        next();
        return;
      }
      res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
      this.send(req, res, found);
    };
  }

  private send(req: Request, res: Response, file: Asset): void {
    res.setHeader('Content-Type', file.type);
    res.setHeader('ETag', file.etag);
    res.vary('Accept-Encoding');
    if (req.headers['if-none-match'] === file.etag) {
      res.status(304).end();
      return;
    }
    const gzip = file.gzip && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const body = gzip ? file.gzip! : file.body;
    if (gzip) res.setHeader('Content-Encoding', 'gzip');
    res.setHeader('Content-Length', String(body.length));
    res.status(200).end(req.method === 'HEAD' ? undefined : body);
  }
}
