import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { signedInUser } from '../support/flows';
import { createTestApp, TestApp } from '../support/test-app';

const ROOT = join(__dirname, '..', '..');
const doc = (name: string) => readFileSync(join(ROOT, name), 'utf8');
const APP = 'https://app.example.test';

/** The backticked names in the text between `from` and `to` (exclusive), whitespace folded. */
function namesBetween(text: string, from: string, to: string): string[] {
  const folded = text.replace(/\s+/g, ' ');
  const start = folded.indexOf(from);
  const end = folded.indexOf(to, start + from.length);
  if (start < 0 || end < 0) throw new Error(`"${from}" … "${to}" not found`);
  return [...folded.slice(start + from.length, end).matchAll(/`([A-Za-z-]+)`/g)].map((m) => m[1]);
}

const headerList = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean)
    .sort();

/** What the docs say of the service, checked against the running service. */
describe('the docs agree with the service', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { CORS_ORIGINS: APP } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('http-api.md lists the headers a listed origin may send and read, as the CORS answers say', async () => {
    const text = doc('docs/http-api.md');
    const send = namesBetween(text, 'Listed origins may send', ', and read');
    const read = namesBetween(text, ', and read', '. - ');
    const preflight = await t
      .api()
      .options('/api/v1/auth/refresh')
      .set('Origin', APP)
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'content-type');
    expect(preflight.headers['access-control-allow-credentials']).toBe('true');
    expect(headerList(preflight.headers['access-control-allow-headers'])).toEqual(headerList(send.join(',')));
    const answer = await t.api().get('/health/live').set('Origin', APP);
    expect(headerList(answer.headers['access-control-expose-headers'])).toEqual(headerList(read.join(',')));
    // The ones a browser app of the cookie transport and DPoP cannot do without.
    expect(send).toEqual(expect.arrayContaining(['X-Refresh-Token-Transport', 'DPoP']));
    expect(read).toEqual(expect.arrayContaining(['WWW-Authenticate', 'DPoP-Nonce']));
  });

  it("resource-servers.md's example token shows the claims of a new user's token, roles [] included", async () => {
    const text = doc('docs/resource-servers.md');
    const example = /^payload (\{[\s\S]*?\}\})/m.exec(text)?.[1];
    if (!example) throw new Error('no example payload in resource-servers.md');
    const shown = new Set([...example.matchAll(/"([a-z_]+)":/g)].map((m) => m[1]));
    shown.delete('jkt'); // inside cnf, which only DPoP-bound tokens carry
    const user = await signedInUser(t);
    const claims = JSON.parse(Buffer.from(user.accessToken.split('.')[1], 'base64url').toString()) as Record<string, unknown>;
    // The example also shows the claims only some tokens carry: cnf (DPoP-bound) and app_metadata (when set).
    expect([...shown].filter((claim) => claim !== 'cnf' && claim !== 'app_metadata').sort()).toEqual(Object.keys(claims).sort());
    expect(shown).toContain('app_metadata');
    expect(claims).not.toHaveProperty('app_metadata');
    expect(example).toContain('"roles":[]');
    expect(claims.roles).toEqual([]);
  });

  it("sdk.md installs the tarball npm pack writes, by the package's version", () => {
    const { name, version } = JSON.parse(doc('client/package.json')) as { name: string; version: string };
    const tarball = `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`;
    const text = doc('docs/sdk.md');
    expect(text).toContain(`npm install ./${tarball}`);
    expect(text).toContain('npm pack --pack-destination');
  });
});
