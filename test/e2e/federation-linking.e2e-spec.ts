import { DeferredWork } from '../../src/adapters/http/deferred-work';
import { WebhookDispatcher } from '../../src/adapters/webhooks/webhook-dispatcher';
import { adminApi, storedEvents } from '../support/admin-flows';
import { bearer, signedInUser } from '../support/flows';
import { FederationHarness, providerAccount } from '../support/federation';
import { ProviderAccount } from '../support/oidc-provider';
import { addPasskey } from '../support/passkeys';
import { TestApp } from '../support/test-app';
import { WebhookReceiver } from '../support/webhook-receiver';

const ALIAS = 'corp';
const AUTH = '/api/v1/auth';

/** Linking a provider's account to a signed-in user, and unlinking (the takeover of an account nobody proved: test/security/fed.security.spec.ts). */
describe('Linked identities (oidc-provider, driven through its own pages)', () => {
  let h: FederationHarness;
  let t: TestApp;
  let receiver: WebhookReceiver;
  const accounts: Record<string, Required<Omit<ProviderAccount, 'name'>>> = {};

  beforeAll(async () => {
    for (const name of ['judy', 'kate', 'liam', 'nina']) accounts[name] = providerAccount(name);
    h = await FederationHarness.start({ accounts, app: { env: { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } } });
    t = h.t;
    receiver = await WebhookReceiver.start();
    const hook = await adminApi(t, h.rootToken, 'default')
      .post('/webhooks')
      .send({ url: receiver.url, events: ['identity.linked', 'identity.unlinked'] });
    expect(hook.status).toBe(201);
    receiver.secrets = [hook.body.webhook.secret];
  });
  afterAll(async () => {
    await receiver?.down();
    await h?.stop();
  });

  async function delivered(type: string, userId: string) {
    await t.app.get(DeferredWork).settled();
    await t.app.get(WebhookDispatcher).dispatchDue();
    return receiver.ofType(type).filter((r) => r.payload.data.userId === userId && r.verifiedWith.length === 1);
  }

  it('links a provider’s account to the signed-in user ({"link": true}); its sign-ins land there; audited and sent to webhooks', async () => {
    const user = await signedInUser(t);
    const { location, res } = await h.link('judy', user.accessToken);
    expect(location.origin + location.pathname).toBe(h.returnTo());
    expect(location.searchParams.get('link_code')).toMatch(/^[A-Za-z0-9_-]{32,}$/);
    expect(location.searchParams.get('code')).toBeNull();
    expect(location.searchParams.get('linked')).toBeNull();
    expect(res!.status).toBe(200);
    const [identity] = await h.identities(user.accessToken);
    expect(identity).toMatchObject({ provider: ALIAS, subject: 'judy', email: accounts.judy.email });
    expect(res!.body).toEqual({
      identity: {
        id: identity.id,
        provider: ALIAS,
        subject: 'judy',
        email: accounts.judy.email,
        linkedAt: expect.any(String),
        lastUsedAt: expect.any(String),
      },
    });
    // Linking needs the caller's access token.
    const anonymous = await h.start({ body: { link: true } });
    expect([anonymous.res.status, anonymous.res.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    // judy's sign-ins now land on this user, whose address is another.
    const signIn = await h.signIn('judy');
    expect(signIn.body.user).toMatchObject({ id: user.id, email: user.email });
    // Linking it again is harmless; another user may not take it.
    const again = await h.link('judy', user.accessToken);
    expect([again.res!.status, again.res!.body.identity.id]).toEqual([200, identity.id]);
    const other = await signedInUser(t);
    expect((await h.link('judy', other.accessToken)).location.searchParams.get('error')).toBe('identity_in_use');
    expect(await h.identities(other.accessToken)).toEqual([]);

    const [event] = await storedEvents(t, 'default', { userId: user.id, type: 'identity.linked' });
    expect(event.details).toMatchObject({ provider: ALIAS, subject: 'judy', identityId: identity.id });
    const [hook] = await delivered('identity.linked', user.id);
    expect(hook.payload.data.details).toMatchObject({ provider: ALIAS, identityId: identity.id });
  });

  it('unlinks (DELETE /identities/:id): its sign-ins stop landing there; audited and sent to webhooks; another user’s → 404', async () => {
    const user = await signedInUser(t);
    await h.link('kate', user.accessToken);
    const [identity] = await h.identities(user.accessToken);
    const stranger = await signedInUser(t);
    const foreign = await t
      .api()
      .delete(`${AUTH}/identities/${identity.id}`)
      .set(...bearer(stranger.accessToken));
    expect([foreign.status, foreign.body.error.code]).toEqual([404, 'NOT_FOUND']);
    const res = await t
      .api()
      .delete(`${AUTH}/identities/${identity.id}`)
      .set(...bearer(user.accessToken));
    expect([res.status, res.body]).toEqual([200, { success: true }]);
    expect(await h.identities(user.accessToken)).toEqual([]);
    // kate's address belongs to nobody here: the next sign-in makes a user of its own.
    const after = await h.signIn('kate');
    expect(after.body.user.id).not.toBe(user.id);

    const [event] = await storedEvents(t, 'default', { userId: user.id, type: 'identity.unlinked' });
    expect(event).toMatchObject({ actor_id: null, details: { provider: ALIAS, identityId: identity.id } });
    const [hook] = await delivered('identity.unlinked', user.id);
    expect(hook.payload.data.details).toMatchObject({ provider: ALIAS, identityId: identity.id });
  });

  it('refuses to unlink the last way in (no password, no other identity, no passkey) → 409; with a passkey it may', async () => {
    const first = await h.signIn('liam');
    const accessToken = first.body.tokens.accessToken as string;
    const [identity] = await h.identities(accessToken);
    const refused = await t
      .api()
      .delete(`${AUTH}/identities/${identity.id}`)
      .set(...bearer(accessToken));
    expect([refused.status, refused.body.error.code]).toEqual([409, 'INVALID_USER_STATE']);
    expect(await h.identities(accessToken)).toHaveLength(1);
    await addPasskey(t, accessToken);
    const allowed = await t
      .api()
      .delete(`${AUTH}/identities/${identity.id}`)
      .set(...bearer(accessToken));
    expect(allowed.status).toBe(200);
  });

  it('an administrator unlinks even the last way in (DELETE /v1/admin/users/:id/identities/:identityId), audited with the actor', async () => {
    const first = await h.signIn('nina');
    const userId = first.body.user.id as string;
    const [identity] = await h.identities(first.body.tokens.accessToken);
    const admin = adminApi(t, h.rootToken, 'default');
    const unknown = await admin.delete(`/users/${userId}/identities/00000000-0000-4000-8000-000000000000`);
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'NOT_FOUND']);
    const res = await admin.delete(`/users/${userId}/identities/${identity.id}`);
    expect([res.status, res.body]).toEqual([200, { success: true }]);
    const user = await admin.get(`/users/${userId}`);
    expect(user.body.user.identities).toEqual([]);
    const [event] = await storedEvents(t, 'default', { userId, type: 'identity.unlinked' });
    expect(event.actor_id).toEqual(expect.any(String));
    expect(event.details).toMatchObject({ provider: ALIAS, identityId: identity.id });
    const [hook] = await delivered('identity.unlinked', userId);
    expect(hook).toBeDefined();
  });
});
