import { ADMIN_ENV, adminApi, createUser, superAdmin } from '../../test/support/admin-flows';
import { PASSWORD, uniqueEmail } from '../../test/support/flows';
import { createOrganization, mailedToken } from '../../test/support/organizations';
import { freePort } from '../../test/support/sdk-app-page';
import { createTestApp, TestApp } from '../../test/support/test-app';
import { createIdentityClient, IdentityError, memoryStorage, type IdentityClient } from '../src/index.js';

describe('the client’s organizations against the real service', () => {
  let t: TestApp;
  let baseUrl: string;
  const clients: IdentityClient[] = [];
  const make = () => {
    const client = createIdentityClient({ baseUrl, realm: 'default', transport: memoryStorage(), fingerprint: () => ({}) as never });
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    t = await createTestApp({ env: { ...ADMIN_ENV, API_URL: baseUrl } });
    await t.app.listen(port, '127.0.0.1');
  });
  afterAll(async () => {
    clients.forEach((client) => client.destroy());
    await t?.close();
  });

  it('lists, invites, accepts, switches (the snapshot follows the org claim, also after a refresh) and manages members', async () => {
    const root = await superAdmin(t);
    const orgId = await createOrganization(t, root.accessToken, 'default', { name: 'Acme', slug: 'acme-sdk' });
    const alice = await createUser(t, root.accessToken, 'default', { emailVerified: true });
    await adminApi(t, root.accessToken, 'default')
      .put(`/organizations/${orgId}/members/${alice.id}`)
      .send({ roles: ['org-admin'] });

    const client = make();
    await client.ready;
    await client.signIn({ email: alice.email, password: PASSWORD });
    expect(client.getSnapshot()).toMatchObject({ status: 'signed-in', organization: null });
    expect(await client.organizations.list()).toEqual([{ id: orgId, name: 'Acme', slug: 'acme-sdk', roles: ['org-admin'] }]);

    expect(await client.organizations.setActive(orgId)).toEqual({ id: orgId, slug: 'acme-sdk', roles: ['org-admin'] });
    expect(client.getSnapshot()).toMatchObject({ organization: { id: orgId, slug: 'acme-sdk', roles: ['org-admin'] } });
    await client.refresh();
    expect(client.getSnapshot()).toMatchObject({ organization: { id: orgId } });

    const bobEmail = uniqueEmail('bob');
    const invitation = await client.organizations.invite(orgId, { email: bobEmail, roles: [] });
    expect(invitation).toMatchObject({ email: bobEmail, status: 'pending', roles: [] });
    expect((await client.organizations.invitations(orgId)).map((i) => i.id)).toEqual([invitation.id]);

    const bob = await createUser(t, root.accessToken, 'default', { email: bobEmail, emailVerified: true });
    const bobClient = make();
    await bobClient.ready;
    await bobClient.signIn({ email: bobEmail, password: PASSWORD });
    const token = await mailedToken(t, bobEmail, '/account/invitation');
    expect(await bobClient.organizations.accept(token)).toEqual({ id: orgId, name: 'Acme', slug: 'acme-sdk', roles: [] });
    const error = await bobClient.organizations.members(orgId).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IdentityError);
    expect((error as IdentityError).code).toBe('FORBIDDEN');

    const members = await client.organizations.members(orgId);
    expect(members.pagination.total).toBe(2);
    expect((await client.organizations.setMemberRoles(orgId, bob.id, ['org-admin'])).roles).toEqual(['org-admin']);
    await client.organizations.removeMember(orgId, bob.id);
    expect((await client.organizations.members(orgId)).members.map((m) => m.userId)).toEqual([alice.id]);

    const other = await client.organizations.invite(orgId, { email: uniqueEmail('carol'), roles: [] });
    await client.organizations.revokeInvitation(orgId, other.id);
    expect(await client.organizations.invitations(orgId)).toEqual([]);

    expect(await client.organizations.setActive(null)).toBeNull();
    expect(client.getSnapshot()).toMatchObject({ organization: null });
  });
});
