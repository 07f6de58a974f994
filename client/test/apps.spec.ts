import * as oidc from 'openid-client';
import { OpClients } from '../../src/application/ports/op-clients';
import { aClient, InMemoryOpClients, TEST_REDIRECT } from '../../test/fakes/in-memory-op-clients';
import { PASSWORD, register, uniqueEmail } from '../../test/support/flows';
import { authorizationRequest, Browser } from '../../test/support/op-browser';
import { freePort } from '../../test/support/sdk-app-page';
import { createTestApp, TestApp } from '../../test/support/test-app';
import { createIdentityClient, IdentityError, memoryStorage } from '../src/index.js';

describe('the client’s apps against the real service', () => {
  let t: TestApp;
  let baseUrl: string;

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    t = await createTestApp({
      env: { API_URL: baseUrl },
      override: (builder) => builder.overrideProvider(OpClients).useValue(new InMemoryOpClients()),
    });
    await t.app.listen(port, '127.0.0.1');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('lists the apps the user allowed with their scopes and dates, and revokes one: its refresh token is refused', async () => {
    const registered = aClient({ name: 'Photo Printer' });
    (t.app.get(OpClients) as InMemoryOpClients).register('default', registered);
    const person = await register(t, uniqueEmail('apps-sdk'));

    // The user allows the app on the provider's pages.
    const config = await oidc.discovery(new URL(`${baseUrl}/realms/default`), registered.clientId, undefined, oidc.None(), {
      execute: [oidc.allowInsecureRequests],
    });
    const request = await authorizationRequest(config, {
      redirect_uri: TEST_REDIRECT,
      scope: 'openid email offline_access',
      prompt: 'consent',
    });
    const browser = new Browser(baseUrl);
    const signInPage = await browser.open(request.url.href);
    const consent = await browser.submit(signInPage, { email: person.email, password: PASSWORD });
    const back = await browser.submit(consent, { decision: 'allow' });
    const tokens = await oidc.authorizationCodeGrant(config, new URL(back.location!), {
      pkceCodeVerifier: request.verifier,
      expectedState: request.state,
      expectedNonce: request.nonce,
    });

    const client = createIdentityClient({ baseUrl, realm: 'default', transport: memoryStorage(), fingerprint: () => ({}) as never });
    try {
      await client.ready;
      await client.signIn({ email: person.email, password: PASSWORD });
      const apps = await client.apps.list();
      expect(apps).toEqual([
        {
          clientId: registered.clientId,
          name: 'Photo Printer',
          scopes: expect.arrayContaining(['openid', 'email', 'offline_access']),
          grantedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          lastUsedAt: apps[0]?.lastUsedAt === null ? null : expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        },
      ]);

      await expect(client.apps.revoke(registered.clientId)).resolves.toBeUndefined();
      expect(await client.apps.list()).toEqual([]);
      await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });

      const error = await client.apps.revoke(registered.clientId).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(IdentityError);
      expect(error).toMatchObject({ code: 'CLIENT_NOT_FOUND', status: 404 });
    } finally {
      client.destroy();
    }
  });
});
