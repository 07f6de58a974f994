import { createHash, randomUUID } from 'node:crypto';
import * as oidc from 'openid-client';
import { OpClients } from '../../src/application/ports/op-clients';
import { OrganizationRepository } from '../../src/application/ports/organization.repository';
import { Transaction } from '../../src/application/ports/transaction';
import { Organization } from '../../src/domain/organization/organization';
import { aClient, InMemoryOpClients, TEST_REDIRECT } from '../fakes/in-memory-op-clients';
import { authorizationRequest, Browser, listening } from '../support/op-browser';
import { ADMIN_ENV, adminApi, createRealm, createUser, SignedIn, superAdmin } from '../support/admin-flows';
import { bearer, login, PASSWORD, register, uniqueEmail } from '../support/flows';
import { createOrganization, mailedToken, orgApi, verifyAddress } from '../support/organizations';
import { codeFor, verifyCode } from '../support/email-codes';
import { FederationHarness } from '../support/federation';
import { addPasskey, passkeySignIn } from '../support/passkeys';
import { createTestApp, TestApp } from '../support/test-app';

jest.setTimeout(180_000);

type Method = 'get' | 'post' | 'put' | 'delete' | 'patch';
interface Route {
  method: Method;
  path: string;
}

/** The organization routes as the Express router has them, so a new one joins the matrix by itself. */
function organizationRoutes(t: TestApp): Route[] {
  const express = t.app.getHttpAdapter().getInstance() as {
    router: { stack: { route?: { path: string; methods: Record<string, boolean> } }[] };
  };
  return express.router.stack.flatMap((layer) =>
    layer.route && (layer.route.path.startsWith('/api/v1/auth/organizations') || layer.route.path.startsWith('/v1/admin/organizations'))
      ? Object.entries(layer.route.methods)
          .filter(([method, on]) => on && method !== '_all')
          .map(([method]) => ({ method: method as Method, path: layer.route!.path }))
      : [],
  );
}

const outcome = (res: { status: number; body: { error?: { code: string } } }) => `${res.status} ${res.body.error?.code ?? ''}`.trim();

async function signIn(t: TestApp, email: string, realm = 'default'): Promise<string> {
  const res = await login(t, email, PASSWORD, {}, realm);
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.tokens.accessToken as string;
}

describe('ORG — organizations (SECURITY.md)', () => {
  let t: TestApp;
  let root: SignedIn;
  let admin: ReturnType<typeof adminApi>;

  beforeAll(async () => {
    t = await createTestApp({ env: ADMIN_ENV });
    root = await superAdmin(t);
    admin = adminApi(t, root.accessToken, 'default');
    await createRealm(t, root.accessToken, 'other');
  });
  afterAll(() => t?.close());

  /** An organization of the realm with an org-admin and a plain member, made through the admin API. */
  async function organizationWithAdmin(slug: string) {
    const id = await createOrganization(t, root.accessToken, 'default', { name: slug, slug });
    const orgAdmin = await createUser(t, root.accessToken, 'default', { emailVerified: true });
    const member = await createUser(t, root.accessToken, 'default', { emailVerified: true });
    expect((await admin.put(`/organizations/${id}/members/${orgAdmin.id}`).send({ roles: ['org-admin'] })).status).toBe(200);
    expect((await admin.put(`/organizations/${id}/members/${member.id}`).send({ roles: [] })).status).toBe(200);
    return { id, orgAdmin, member };
  }

  it('ORG-01 accepts an invitation only for a signed-in user whose verified address is the invited one; tokens hashed, single use, 7 days, replaced by a newer one', async () => {
    const orgId = await createOrganization(t, root.accessToken, 'default', { name: 'Org One', slug: 'org-01' });
    const invite = async (email: string) => {
      const res = await admin.post(`/organizations/${orgId}/invitations`).send({ email, roles: ['org-admin'] });
      expect(res.status).toBe(201);
      return { id: res.body.invitation.id as string, token: await mailedToken(t, email, '/account/invitation') };
    };
    const accept = (access: string, token: string) => orgApi(t, access).post('/invitations/accept').send({ token });

    // Someone registers the invited address before its owner: unverified, the account never joins.
    const victim = uniqueEmail('victim');
    const invitation = await invite(victim);
    const [stored] = await t.dataSource.query(`SELECT token_hash FROM organization_invitations WHERE id = $1`, [invitation.id]);
    expect(stored.token_hash).toBe(createHash('sha256').update(invitation.token).digest('base64url'));
    await register(t, victim);
    const squatter = await signIn(t, victim);
    expect(outcome(await accept(squatter, invitation.token))).toBe('403 FORBIDDEN');
    // Another user, verified, who got hold of the link: refused, and the link still works for its owner.
    const other = await createUser(t, root.accessToken, 'default', { emailVerified: true });
    expect(outcome(await accept(other.accessToken, invitation.token))).toBe('403 FORBIDDEN');
    expect((await orgApi(t, other.accessToken).get('')).body.organizations).toEqual([]);
    await verifyAddress(t, victim);
    const owner = await signIn(t, victim);
    expect((await accept(owner, invitation.token)).status).toBe(200);
    // Used.
    expect(outcome(await accept(owner, invitation.token))).toBe('400 INVALID_VERIFICATION_TOKEN');

    // Revoked, replaced, expired.
    const revoked = await invite(other.email);
    await admin.delete(`/organizations/${orgId}/invitations/${revoked.id}`).send({});
    expect(outcome(await accept(other.accessToken, revoked.token))).toBe('400 INVALID_VERIFICATION_TOKEN');
    const replaced = await invite(other.email);
    const newer = await invite(other.email);
    expect(outcome(await accept(other.accessToken, replaced.token))).toBe('400 INVALID_VERIFICATION_TOKEN');
    t.clock.advance(7 * 24 * 3600 - 60);
    const late = await signIn(t, other.email);
    t.clock.advance(61);
    expect(outcome(await accept(late, newer.token))).toBe('400 INVALID_VERIFICATION_TOKEN');
    // A token of another realm's organization is unknown here.
    root = await superAdmin(t);
    admin = adminApi(t, root.accessToken, 'default');
    const otherOrg = await createOrganization(t, root.accessToken, 'other', { name: 'Elsewhere', slug: 'elsewhere' });
    await adminApi(t, root.accessToken, 'other').post(`/organizations/${otherOrg}/invitations`).send({ email: other.email, roles: [] });
    const foreign = await mailedToken(t, other.email, '/account/invitation');
    expect(outcome(await accept(await signIn(t, other.email), foreign))).toBe('400 INVALID_VERIFICATION_TOKEN');
  });

  it('ORG-02 keeps an org-admin inside its organization: no other organization, no realm roles, never without an org-admin', async () => {
    root = await superAdmin(t);
    admin = adminApi(t, root.accessToken, 'default');
    const a = await organizationWithAdmin('org-02-a');
    const b = await organizationWithAdmin('org-02-b');
    const asA = orgApi(t, a.orgAdmin.accessToken);

    // B's members and invitations, read or written, by A's org-admin.
    expect(outcome(await asA.get(`/${b.id}/members`))).toBe('403 FORBIDDEN');
    expect(outcome(await asA.get(`/${b.id}/invitations`))).toBe('403 FORBIDDEN');
    expect(outcome(await asA.put(`/${b.id}/members/${b.member.id}`).send({ roles: ['org-admin'] }))).toBe('403 FORBIDDEN');
    expect(outcome(await asA.delete(`/${b.id}/members/${b.orgAdmin.id}`).send({}))).toBe('403 FORBIDDEN');
    expect(outcome(await asA.post(`/${b.id}/invitations`).send({ email: uniqueEmail(), roles: ['org-admin'] }))).toBe('403 FORBIDDEN');
    // A member of B added to A by name is not A's to change either: the route names the organization.
    expect(outcome(await asA.put(`/${a.id}/members/${b.member.id}`).send({ roles: ['org-admin'] }))).toBe('404 USER_NOT_FOUND');
    // Nor the admin API.
    expect(outcome(await adminApi(t, a.orgAdmin.accessToken, 'default').get(`/organizations/${a.id}/members`))).toBe('403 FORBIDDEN');

    // Realm roles are never organization roles.
    for (const role of ['realm-admin', 'super-admin']) {
      expect(outcome(await asA.put(`/${a.id}/members/${a.member.id}`).send({ roles: [role] }))).toBe('400 VALIDATION_FAILED');
      expect(outcome(await asA.post(`/${a.id}/invitations`).send({ email: uniqueEmail(), roles: [role] }))).toBe('400 VALIDATION_FAILED');
    }
    const me = await t
      .api()
      .get('/api/v1/auth/me')
      .set(...bearer(a.member.accessToken));
    expect(me.body.user.roles).toEqual([]);

    // The last org-admin is neither demoted nor removed by the organization's own administrators.
    expect(outcome(await asA.put(`/${a.id}/members/${a.orgAdmin.id}`).send({ roles: [] }))).toBe('409 INVALID_USER_STATE');
    expect(outcome(await asA.delete(`/${a.id}/members/${a.orgAdmin.id}`).send({}))).toBe('409 INVALID_USER_STATE');
    // With a second one, either may go.
    expect((await asA.put(`/${a.id}/members/${a.member.id}`).send({ roles: ['org-admin'] })).status).toBe(200);
    expect((await asA.put(`/${a.id}/members/${a.orgAdmin.id}`).send({ roles: [] })).status).toBe(200);
    expect(outcome(await orgApi(t, a.member.accessToken).delete(`/${a.id}/members/${a.member.id}`).send({}))).toBe(
      '409 INVALID_USER_STATE',
    );
    // The demoted one administers nothing any more.
    expect(outcome(await asA.get(`/${a.id}/members`))).toBe('403 FORBIDDEN');
    const members = await admin.get(`/organizations/${a.id}/members`);
    expect(members.body.members.map((m: { userId: string; roles: string[] }) => [m.userId, m.roles])).toEqual([
      [a.orgAdmin.id, []],
      [a.member.id, ['org-admin']],
    ]);
    // Each change was audited with its actor.
    const [changed] = await t.dataSource.query(
      `SELECT actor_id FROM audit_events WHERE type = 'organization.member_roles_changed' AND user_id = $1 ORDER BY at DESC LIMIT 1`,
      [a.orgAdmin.id],
    );
    expect(changed.actor_id).toBe(a.orgAdmin.id);
  });

  it('ORG-02 decides every organization route, for each kind of caller, as one rule says: route × caller matrix', async () => {
    root = await superAdmin(t);
    admin = adminApi(t, root.accessToken, 'default');
    const a = await organizationWithAdmin('org-02-matrix-a');
    const b = await organizationWithAdmin('org-02-matrix-b');
    const outsider = await createUser(t, root.accessToken, 'default', { emailVerified: true });
    const realmAdmin = await createUser(t, root.accessToken, 'default', { roles: ['realm-admin'] });
    const otherRealmOrg = await createOrganization(t, root.accessToken, 'other', { name: 'Other', slug: 'other-matrix' });
    const otherRealmAdmin = await createUser(t, root.accessToken, 'other', { emailVerified: true });
    await adminApi(t, root.accessToken, 'other')
      .put(`/organizations/${otherRealmOrg}/members/${otherRealmAdmin.id}`)
      .send({ roles: ['org-admin'] });
    const otherRealmToken = await signIn(t, otherRealmAdmin.email, 'other');

    const routes = organizationRoutes(t);
    const own = routes.filter((r) => r.path.startsWith('/api/v1/auth/organizations/:id'));
    const administrative = routes.filter((r) => r.path.startsWith('/v1/admin/'));
    expect(own.length).toBe(6);
    expect(administrative.length).toBe(11);

    type Want = 'admitted' | '401 INVALID_TOKEN' | '403 FORBIDDEN' | '404 ORGANIZATION_NOT_FOUND';
    const callers: { who: string; token: string | null; realm: string; org: string; own: Want; admin: Want }[] = [
      { who: "A's org-admin", token: a.orgAdmin.accessToken, realm: 'default', org: a.id, own: 'admitted', admin: '403 FORBIDDEN' },
      { who: "A's member", token: a.member.accessToken, realm: 'default', org: a.id, own: '403 FORBIDDEN', admin: '403 FORBIDDEN' },
      {
        who: "B's org-admin on A",
        token: b.orgAdmin.accessToken,
        realm: 'default',
        org: a.id,
        own: '403 FORBIDDEN',
        admin: '403 FORBIDDEN',
      },
      {
        who: 'a user of no organization',
        token: outsider.accessToken,
        realm: 'default',
        org: a.id,
        own: '403 FORBIDDEN',
        admin: '403 FORBIDDEN',
      },
      {
        who: 'a realm-admin (administers over /v1/admin)',
        token: realmAdmin.accessToken,
        realm: 'default',
        org: a.id,
        own: '403 FORBIDDEN',
        admin: 'admitted',
      },
      {
        who: "A's org-admin, on an organization of another realm",
        token: a.orgAdmin.accessToken,
        realm: 'default',
        org: otherRealmOrg,
        own: '404 ORGANIZATION_NOT_FOUND',
        admin: '403 FORBIDDEN',
      },
      {
        who: "another realm's org-admin, on A, in its realm",
        token: otherRealmToken,
        realm: 'other',
        org: a.id,
        own: '404 ORGANIZATION_NOT_FOUND',
        admin: '403 FORBIDDEN',
      },
      { who: 'no token', token: null, realm: 'default', org: a.id, own: '401 INVALID_TOKEN', admin: '401 INVALID_TOKEN' },
    ];
    // Valid bodies and ids that exist nowhere: an admitted call changes nothing it should not (an
    // invitation to a fresh address at most) and answers 200, 201 or 404 of the thing it names.
    const body = (route: Route) => {
      if (route.path.endsWith('/invitations') && route.method === 'post') return { email: uniqueEmail('matrix'), roles: [] };
      if (route.path.endsWith('/members/:userId') && route.method === 'put') return { roles: [] };
      if (route.path === '/v1/admin/organizations' && route.method === 'post') return { name: 'M', slug: `m-${randomUUID().slice(0, 8)}` };
      if (route.path === '/v1/admin/organizations/:id' && route.method === 'patch') return {};
      return route.method === 'get' ? undefined : {};
    };
    const mismatches: string[] = [];
    for (const caller of callers) {
      for (const route of [...own, ...administrative]) {
        const want = route.path.startsWith('/v1/admin/') ? caller.admin : caller.own;
        // Deleting the organization itself aims at one of its own, so the routes after it still find A.
        const org =
          route.method === 'delete' && route.path === '/v1/admin/organizations/:id'
            ? await createOrganization(t, root.accessToken, 'default', { name: 'Doomed', slug: `doomed-${randomUUID().slice(0, 8)}` })
            : caller.org;
        const url = route.path.replace(':id', org).replace(/:[A-Za-z]+/g, () => randomUUID());
        let req = t.api()[route.method](url).set('X-Realm-Id', caller.realm);
        if (caller.token) req = req.set(...bearer(caller.token));
        const payload = body(route);
        const res = payload === undefined ? await req : await req.send(payload);
        const got = outcome(res);
        const ok =
          want === 'admitted'
            ? [200, 201].includes(res.status) || (res.status === 404 && got !== '404 ORGANIZATION_NOT_FOUND')
            : got === want;
        if (!ok) mismatches.push(`${caller.who}: ${route.method.toUpperCase()} ${route.path} → ${got}, expected ${want}`);
      }
    }
    expect(mismatches).toEqual([]);
    // Nothing a refused caller aimed at changed: A still has exactly its two members, as they were.
    const members = await admin.get(`/organizations/${a.id}/members`);
    expect(members.body.members.map((m: { userId: string; roles: string[] }) => [m.userId, m.roles])).toEqual([
      [a.orgAdmin.id, ['org-admin']],
      [a.member.id, []],
    ]);
  });
});

describe('ORG-03 — an organization that requires its identity provider (oidc-provider as the real provider)', () => {
  let h: FederationHarness;
  let t: TestApp;
  const domain = `sso-${randomUUID().slice(0, 8)}.example`;
  const ann = { email: `ann@${domain}`, email_verified: true, given_name: 'Ann', family_name: 'Tester' };

  beforeAll(async () => {
    h = await FederationHarness.start({ accounts: { ann }, app: { env: ADMIN_ENV } });
    t = h.t;
  });
  afterAll(() => h?.stop());

  it('ORG-03 refuses every other way in for an address of its domains, known or not, alike; its provider signs in and makes a member', async () => {
    const admin = adminApi(t, h.rootToken, 'default');
    // Before the organization requires its provider: an account of the domain with a password and a passkey.
    const known = await createUser(t, h.rootToken, 'default', { email: `known@${domain}`, emailVerified: true });
    const { authenticator } = await addPasskey(t, known.accessToken);
    const domainAdmin = await createUser(t, h.rootToken, 'default', { email: `it@${domain}`, roles: ['realm-admin'], emailVerified: true });
    const orgId = await createOrganization(t, h.rootToken, 'default', {
      name: 'SSO Corp',
      slug: 'sso-corp',
      domains: [domain],
      identityProvider: 'corp',
    });

    // Home-realm discovery names the organization and its provider, for any address of its domains.
    const discovered = await t.api().get(`/api/v1/auth/providers?email=${encodeURIComponent(`Someone@${domain.toUpperCase()}`)}`);
    expect(discovered.body).toEqual({
      providers: [{ alias: 'corp', displayName: 'SSO corp' }],
      organization: { id: orgId, name: 'SSO Corp', slug: 'sso-corp', identityProvider: 'corp' },
    });
    expect((await t.api().get('/api/v1/auth/providers?email=someone@elsewhere.example')).body.organization).toBeNull();
    expect((await login(t, known.email)).status).toBe(200);

    expect((await admin.patch(`/organizations/${orgId}`).send({ requireIdentityProvider: true })).status).toBe(200);
    const answers = {
      'password, right': await login(t, known.email, PASSWORD),
      'password, wrong': await login(t, known.email, 'not the password at all'),
      'password, unknown address': await login(t, `nobody@${domain}`, PASSWORD),
      'password, same address in capitals': await login(t, known.email.toUpperCase(), PASSWORD),
      passkey: await passkeySignIn(t, authenticator),
    };
    const codeMail = await codeFor(t, known.email);
    const unknownMail = await codeFor(t, `newcomer@${domain}`);
    Object.assign(answers, {
      'email code, known address': await verifyCode(t, { email: known.email, code: codeMail.code }),
      'email code, unknown address': await verifyCode(t, { email: `newcomer@${domain}`, code: unknownMail.code }),
    });
    const first = answers['password, right'];
    expect(first.body).toEqual({
      error: { code: 'SSO_REQUIRED', message: expect.any(String), status: 403 },
    });
    for (const [way, res] of Object.entries(answers)) expect([way, res.status, res.body]).toEqual([way, 403, first.body]);
    // No account was made for the unknown address, and the refusals are audited.
    expect((await admin.get(`/users?search=newcomer@${domain}`)).body.pagination.total).toBe(0);
    const refused: { n: string }[] = await t.dataSource.query(
      `SELECT count(*) AS n FROM audit_events WHERE type = 'login.failed' AND details->>'reason' = 'sso_required'`,
    );
    expect(Number(refused[0].n)).toBe(Object.keys(answers).length);

    // Administrators are exempt.
    expect((await login(t, domainAdmin.email)).status).toBe(200);

    // The organization's provider signs in, and makes the user a member (no roles).
    const signedIn = await h.signIn('ann');
    expect(signedIn.status).toBe(200);
    const members = (await admin.get(`/organizations/${orgId}/members`)).body.members;
    expect(members).toEqual([{ userId: signedIn.body.user.id, email: ann.email, roles: [], joinedAt: expect.any(String) }]);
    const [added] = await t.dataSource.query(`SELECT details FROM audit_events WHERE type = 'organization.member_added' AND user_id = $1`, [
      signedIn.body.user.id,
    ]);
    expect(added.details).toMatchObject({ organizationId: orgId, method: 'federated', provider: 'corp' });
    expect((await h.signIn('ann')).status).toBe(200);
    expect((await admin.get(`/organizations/${orgId}`)).body.organization.memberCount).toBe(1);

    // No longer required: the other ways work again.
    expect((await admin.patch(`/organizations/${orgId}`).send({ requireIdentityProvider: false })).status).toBe(200);
    expect((await login(t, known.email)).status).toBe(200);
  });
});

describe("ORG-03 — the OpenID provider's sign-in page", () => {
  let t: TestApp;
  let origin: string;
  afterAll(() => t?.close());

  it('ORG-03 answers an address of an organization that requires its provider on the OP’s page with 403, known or not, the same page', async () => {
    t = await createTestApp({ override: (builder) => builder.overrideProvider(OpClients).useValue(new InMemoryOpClients()) });
    origin = await listening(t);
    const domain = `op-${randomUUID().slice(0, 8)}.example`;
    const known = await register(t, `known@${domain}`);
    // Stored directly: the provider's alias is the organization's to name, not this page's to check.
    const organization = Organization.create({
      id: randomUUID(),
      realmId: 'default',
      name: 'OP Corp',
      slug: 'op-corp',
      domains: [domain],
      identityProvider: 'corp',
      requireIdentityProvider: true,
      createdAt: t.clock.now(),
    });
    await t.app.get(Transaction).run(() => t.app.get(OrganizationRepository).insert(organization));

    const registered = aClient({ firstParty: true });
    (t.app.get(OpClients) as InMemoryOpClients).register('default', registered);
    const config = await oidc.discovery(new URL(`${origin}/realms/default`), registered.clientId, undefined, oidc.None(), {
      execute: [oidc.allowInsecureRequests],
    });
    const pages = [];
    for (const [email, password] of [
      [known.email, PASSWORD],
      [known.email, 'a wrong password entirely'],
      [`nobody@${domain}`, PASSWORD],
    ]) {
      const browser = new Browser(origin);
      const request = await authorizationRequest(config, { redirect_uri: TEST_REDIRECT, scope: 'openid' });
      const page = await browser.submit(await browser.open(request.url.href), { email, password });
      pages.push({ status: page.status, location: page.location, sso: page.html.includes('its own identity provider') });
    }
    expect(pages).toEqual(Array(3).fill({ status: 403, location: null, sso: true }));
  });
});
