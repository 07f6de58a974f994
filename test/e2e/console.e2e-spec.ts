import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CreateRealmUseCase } from '../../src/application/admin/create-realm.use-case';
import { EmailTemplates } from '../../src/application/mail/email-templates';
import { buildConsole } from '../support/console-build';
import { createTestApp, TestApp } from '../support/test-app';

const API_CSP = "default-src 'none';frame-ancestors 'none'";

/** The directives of a Content-Security-Policy header, by name. */
function directives(header: string): Map<string, string[]> {
  return new Map(
    header
      .split(';')
      .map((part) => part.trim().split(/\s+/))
      .filter((words) => words[0])
      .map(([name, ...values]) => [name, values]),
  );
}

describe('the account console pages', () => {
  let dir: string;
  let t: TestApp;
  let script: string;
  let style: string;

  beforeAll(async () => {
    dir = buildConsole();
    t = await createTestApp({ config: (c) => (c.accountConsoleDir = dir) });
    const assets = readdirSync(join(dir, 'assets'));
    script = assets.find((name) => /^console-\w+\.js$/.test(name))!;
    style = assets.find((name) => name.endsWith('.css'))!;
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(['/account/', '/account/?realm=acme', '/verify-email?token=abc', '/reset-password?token=abc'])(
    'serves %s: the page, with a strict CSP of its own and no caching without revalidation',
    async (path) => {
      const res = await t.api().get(path);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.text).toContain(`<script type="module" src="/account/assets/${script}"></script>`);
      expect(res.text).toContain(`<link rel="stylesheet" href="/account/assets/${style}" />`);
      // No inline script or style in the page.
      expect(res.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
      expect(res.text).not.toMatch(/<style|\sstyle=/);
      const csp = directives(res.headers['content-security-policy']);
      expect(csp.get('default-src')).toEqual(["'self'"]);
      expect(csp.get('script-src')).toEqual(["'self'"]);
      expect(csp.get('style-src')).toEqual(["'self'"]);
      expect(csp.get('img-src')).toEqual(["'self'", 'data:']);
      expect(csp.get('connect-src')).toEqual(["'self'"]);
      expect(csp.get('object-src')).toEqual(["'none'"]);
      expect(csp.get('frame-ancestors')).toEqual(["'none'"]);
      expect(csp.get('require-trusted-types-for')).toEqual(["'script'"]);
      expect(res.headers['content-security-policy']).not.toMatch(/unsafe|https?:|\*/);
      // The rest of the security headers are the service's.
      expect(res.headers).toMatchObject({
        'x-frame-options': 'DENY',
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'cross-origin-opener-policy': 'same-origin',
      });
    },
  );

  it('names the realm of ?realm= in the page by its display name (escaped), the id for an unknown one', async () => {
    await t.app.get(CreateRealmUseCase).execute({ id: 'acme-corp', name: 'Acme & "Sons" <Ltd>', actorId: null, ip: null });
    const meta = async (path: string) => /<meta name="realm-name" content="([^"]*)" \/>/.exec((await t.api().get(path)).text)?.[1];
    expect(await meta('/account/')).toBe('Default');
    expect(await meta('/verify-email?token=abc')).toBe('Default');
    expect(await meta('/account/?realm=acme-corp')).toBe('Acme &amp; &quot;Sons&quot; &lt;Ltd&gt;');
    expect(await meta('/reset-password?token=abc&realm=acme-corp')).toBe('Acme &amp; &quot;Sons&quot; &lt;Ltd&gt;');
    expect(await meta('/account/?realm=nowhere')).toBe('nowhere');
    expect(await meta('/account/?realm=%3Cscript%3E')).toBe('Default');
  });

  it('redirects /account to /account/, keeping the query', async () => {
    const plain = await t.api().get('/account');
    expect(plain.status).toBe(301);
    expect(plain.headers.location).toBe('/account/');
    const realm = await t.api().get('/account?realm=acme');
    expect(realm.headers.location).toBe('/account/?realm=acme');
  });

  it('serves the hashed assets with their types, cached for a year, gzipped on request, revalidated by ETag', async () => {
    const js = await t.api().get(`/account/assets/${script}`).set('Accept-Encoding', 'identity');
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(js.headers['content-encoding']).toBeUndefined();
    expect(js.text).toContain('X-Refresh-Token-Transport');

    // supertest inflates the body; the length on the wire is the compressed one.
    const gzipped = await t.api().get(`/account/assets/${script}`).set('Accept-Encoding', 'gzip, br');
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gzipped.headers.vary).toMatch(/Accept-Encoding/);
    expect(Number(gzipped.headers['content-length'])).toBeLessThan(js.text.length / 2);
    expect(gzipped.text).toBe(js.text);

    const css = await t.api().get(`/account/assets/${style}`);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.text).toContain(':focus-visible');

    const again = await t.api().get(`/account/assets/${script}`).set('If-None-Match', js.headers.etag);
    expect(again.status).toBe(304);
    expect(again.text ?? '').toBe('');
  });

  it('answers unknown console paths with the API 404', async () => {
    for (const path of ['/account/assets/nothing.js', '/account/assets/../index.html', '/account/security']) {
      const res = await t.api().get(path);
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ status: 404 });
    }
    const post = await t.api().post('/account/').send({});
    expect(post.status).toBe(404);
  });

  it('serves the paths the emails link to, the realm named outside the default one', async () => {
    for (const realmId of ['default', 'acme']) {
      const addressing = { realmId, realmName: 'Realm', to: 'ada@example.com', publicUrl: 'http://localhost:3000', token: 'tok' };
      for (const mail of [
        EmailTemplates.verification(addressing),
        EmailTemplates.passwordReset(addressing),
        EmailTemplates.invitation(addressing),
      ]) {
        const link = new URL(/https?:\/\/\S+/.exec(mail.text)![0]);
        expect(['/verify-email', '/reset-password']).toContain(link.pathname);
        expect(link.searchParams.get('token')).toBe('tok');
        expect(link.searchParams.get('realm')).toBe(realmId === 'default' ? null : realmId);
        expect(mail.html).toContain(`href="${link.href.replace(/&/g, '&amp;')}"`);
        const res = await t.api().get(link.pathname + link.search);
        expect(res.status).toBe(200);
        expect(res.headers['content-security-policy']).toContain("default-src 'self'");
      }
    }
  });

  it('leaves the API its own headers: default-src none, no-store', async () => {
    const health = await t.api().get('/health/live');
    expect(health.headers['content-security-policy']).toBe(API_CSP);
    const login = await t.api().post('/api/v1/auth/login').send({ email: 'nobody@example.com', password: 'whatever it is' });
    expect(login.status).toBe(401);
    expect(login.headers['content-security-policy']).toBe(API_CSP);
    expect(login.headers['cache-control']).toBe('no-store');
    // Swagger UI keeps its own policy.
    const docs = await t.api().get('/docs/openapi.json');
    expect(docs.headers['content-security-policy']).toContain("style-src 'self' 'unsafe-inline'");
  });
});

describe('ACCOUNT_CONSOLE=false', () => {
  let dir: string;
  let t: TestApp;
  beforeAll(async () => {
    dir = buildConsole();
    t = await createTestApp({ env: { ACCOUNT_CONSOLE: 'false' }, config: (c) => (c.accountConsoleDir = dir) });
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 404 on every console path, with the API headers, and the API works as before', async () => {
    const script = readdirSync(join(dir, 'assets')).find((name) => name.endsWith('.js'))!;
    for (const path of ['/account', '/account/', '/verify-email?token=abc', '/reset-password?token=abc', `/account/assets/${script}`]) {
      const res = await t.api().get(path);
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers['content-security-policy']).toBe(API_CSP);
    }
    expect((await t.api().get('/health/live')).status).toBe(200);
  });
});
