import { createHash } from 'node:crypto';
import { runCli } from '../../src/cli';
import { ClientSecrets } from '../../src/application/clients/client-secrets';
import { ClientRepository } from '../../src/application/ports/client.repository';
import { ADMIN_ENV, adminApi, SignedIn, storedEvents, superAdmin } from '../support/admin-flows';
import { createTestApp, TestApp } from '../support/test-app';

jest.setTimeout(120_000);

const sha256 = (value: string) => createHash('sha256').update(value).digest('base64url');

/** Runs a CLI command in-process against the test app; returns exit code and what it printed. */
async function cli(t: TestApp, argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, t.app, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('CLI: clients create and clients list', () => {
  let t: TestApp;
  let root: SignedIn;
  const realm = 'cli-apps';

  beforeAll(async () => {
    t = await createTestApp({ env: ADMIN_ENV });
    root = await superAdmin(t);
    expect((await cli(t, ['create-realm', realm, 'CLI Apps'])).code).toBe(0);
  });
  afterAll(async () => {
    await t?.close();
  });

  const stored = async () =>
    (await t.dataSource.query(`SELECT * FROM oauth_clients WHERE realm_id = $1`, [realm])) as Record<string, unknown>[];

  it('creates a confidential client as the admin API does: its id, and its secret printed once; only the hash is stored; audited as by the command line', async () => {
    const res = await cli(t, ['clients', 'create', realm, 'Billing backend', '--type=confidential', '--grant=client_credentials']);
    expect(res.code).toBe(0);
    expect(res.err).toBe('');
    const [created, idLine, secretLine, ...rest] = res.out.split('\n');
    expect(rest).toEqual([]);
    expect(created).toBe(`Created confidential client "Billing backend" in realm "${realm}"`);
    const clientId = /^Client id: ([A-Za-z0-9_-]{43})$/.exec(idLine)![1];
    const secret = /^Client secret \(shown once, store it now\): ([A-Za-z0-9_-]{43})$/.exec(secretLine)![1];

    // The same client the admin API shows, with the admin API's defaults.
    const shown = await adminApi(t, root.accessToken, realm).get(`/clients/${clientId}`);
    expect(shown.status).toBe(200);
    expect(shown.body.client).toMatchObject({
      clientId,
      name: 'Billing backend',
      type: 'confidential',
      grantTypes: ['client_credentials'],
      tokenEndpointAuthMethod: 'client_secret_basic',
      firstParty: false,
      registeredBy: 'admin',
    });
    const rows = await stored();
    expect(JSON.stringify(rows)).not.toContain(secret);
    expect(rows.find((row) => row.client_id === clientId)?.secret_hash).toBe(sha256(secret));
    const client = (await t.app.get(ClientRepository).findById(realm, clientId))!;
    expect(t.app.get(ClientSecrets).verify(client, secret)).toBe(true);

    const events = await storedEvents(t, realm, { type: 'client.created' });
    expect(events).toEqual([
      expect.objectContaining({
        actor_id: null,
        details: { clientId, name: 'Billing backend', type: 'confidential', registeredBy: 'admin', by: 'cli' },
      }),
    ]);
    expect(JSON.stringify(events)).not.toContain(secret);

    // The list never shows it again.
    const list = await cli(t, ['clients', 'list', realm]);
    expect(list).toEqual({ code: 0, out: `${clientId}  confidential  Billing backend`, err: '' });
    expect((await cli(t, ['clients', 'list', realm, '--json'])).out).not.toContain(secret);
  });

  it('creates a first-party public client with redirect URIs, grants and scopes; no secret; --json prints the client', async () => {
    const res = await cli(t, [
      'clients',
      'create',
      realm,
      'Acme Web',
      '--type=public',
      '--redirect-uri=https://app.acme.example/callback',
      '--redirect-uri=http://127.0.0.1/callback',
      '--post-logout-redirect-uri=https://app.acme.example/',
      '--grant=authorization_code,refresh_token',
      '--scope=openid,profile',
      '--scope=offline_access',
      '--first-party',
      '--id-token-alg=ES256',
      '--access-token-ttl=600',
      '--json',
    ]);
    expect(res.code).toBe(0);
    const printed = JSON.parse(res.out) as { client: { clientId: string }; clientSecret?: string };
    expect(Object.keys(printed)).toEqual(['client']);
    const expected = {
      name: 'Acme Web',
      type: 'public',
      redirectUris: ['https://app.acme.example/callback', 'http://127.0.0.1/callback'],
      postLogoutRedirectUris: ['https://app.acme.example/'],
      grantTypes: ['authorization_code', 'refresh_token'],
      scopes: ['openid', 'profile', 'offline_access'],
      firstParty: true,
      tokenEndpointAuthMethod: 'none',
      idTokenSignedResponseAlg: 'ES256',
      accessTokenTtlSeconds: 600,
    };
    expect(printed.client).toMatchObject(expected);
    const shown = await adminApi(t, root.accessToken, realm).get(`/clients/${printed.client.clientId}`);
    expect(shown.body.client).toEqual(printed.client);
    expect((await cli(t, ['clients', 'list', realm])).out).toContain(`${printed.client.clientId}  public  Acme Web (first party)`);
  });

  it.each([
    ['client_credentials for a public client', ['Web', '--type=public', '--grant=client_credentials'], 1, /^VALIDATION_FAILED: /],
    ['a plain http redirect URI', ['Web', '--type=public', '--redirect-uri=http://app.example/cb'], 1, /^VALIDATION_FAILED: /],
    ['an unknown type', ['Web', '--type=backend'], 1, /^VALIDATION_FAILED: /],
    ['a missing --type', ['Web'], 2, /needs --type=public or --type=confidential/],
    ['an unknown option', ['Web', '--type=public', '--secret=mine'], 2, /Unknown option "--secret"/],
    ['an option without its value', ['Web', '--type=public', '--redirect-uri'], 2, /--redirect-uri needs a value/],
    ['a missing name', ['--type=public'], 2, /clients create takes <realm> <name>/],
  ])('refuses %s and creates nothing', async (_what, words, code, message) => {
    const before = (await stored()).length;
    const res = await cli(t, ['clients', 'create', realm, ...words]);
    expect(res.code).toBe(code);
    expect(res.err).toMatch(message);
    expect(res.out).toBe('');
    expect((await stored()).length).toBe(before);
  });

  it('refuses an unknown realm (1) and an unknown subcommand (2)', async () => {
    const unknown = await cli(t, ['clients', 'create', 'nowhere', 'Web', '--type=public']);
    expect([unknown.code, unknown.err]).toEqual([1, expect.stringMatching(/^REALM_NOT_FOUND: /)]);
    expect((await cli(t, ['clients', 'list', 'nowhere'])).code).toBe(1);
    expect((await cli(t, ['clients', 'delete', realm])).code).toBe(2);
    expect((await cli(t, ['clients', 'list'])).code).toBe(2);
  });
});
