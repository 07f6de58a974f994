import { OrganizationInvitationRepository } from '../../src/application/ports/organization-invitation.repository';
import { OrganizationMemberRepository } from '../../src/application/ports/organization-member.repository';
import { OrganizationRepository } from '../../src/application/ports/organization.repository';
import { Transaction } from '../../src/application/ports/transaction';
import { UserRepository } from '../../src/application/ports/user.repository';
import { Invitation } from '../../src/domain/organization/invitation';
import { Organization } from '../../src/domain/organization/organization';
import { aUser } from '../builders/user.builder';
import {
  InMemoryOrganizationInvitationRepository,
  InMemoryOrganizationMemberRepository,
  InMemoryOrganizationRepository,
  OrganizationStore,
} from '../fakes/in-memory-organizations';
import { InMemoryUserRepository } from '../fakes/in-memory-user.repository';
import { immediateTransaction } from '../fakes/simple-fakes';
import { createTestApp, TestApp } from '../support/test-app';

/** The organization, membership and invitation repository contract, run against the fakes and the database. */
interface Repos {
  organizations: OrganizationRepository;
  members: OrganizationMemberRepository;
  invitations: OrganizationInvitationRepository;
  users: UserRepository;
  tx: Transaction;
}

const now = new Date('2026-11-25T12:00:00.000Z');
const at = (seconds: number) => new Date(now.getTime() + seconds * 1000);
let counter = 0;

function anOrganization(
  realmId = 'default',
  over: { domains?: string[]; slug?: string; identityProvider?: string | null } = {},
): Organization {
  counter += 1;
  return Organization.create({
    id: crypto.randomUUID(),
    realmId,
    name: `Org ${counter}`,
    slug: over.slug ?? `org-${counter}-${Math.random().toString(36).slice(2, 8)}`,
    domains: over.domains,
    identityProvider: over.identityProvider,
    createdAt: now,
  });
}

function anInvitation(organization: Organization, email: string, when = now): Invitation {
  return Invitation.issue({
    id: crypto.randomUUID(),
    organizationId: organization.id,
    realmId: organization.realmId,
    email,
    roles: ['org-admin'],
    tokenHash: `hash-${crypto.randomUUID()}`,
    invitedBy: crypto.randomUUID(),
    now: when,
  });
}

function contract(name: string, setup: () => Promise<{ repos: Repos; teardown: () => Promise<void> }>) {
  describe(`organization repository contract: ${name}`, () => {
    let repos: Repos;
    let teardown: () => Promise<void>;
    beforeAll(async () => {
      ({ repos, teardown } = await setup());
    }, 60_000);
    afterAll(async () => teardown());

    const aMember = async (realmId = 'default') => {
      const user = aUser({ realmId });
      await repos.users.insert(user);
      return user;
    };
    const insert = (organization: Organization) => repos.tx.run(() => repos.organizations.insert(organization));

    it('stores every field, finds an organization only in its realm, and keeps slugs and domains unique per realm', async () => {
      const suffix = Math.random().toString(36).slice(2, 8);
      const org = anOrganization('default', { domains: [`a-${suffix}.example`, `b-${suffix}.example`], identityProvider: null });
      await insert(org);
      expect((await repos.organizations.findById('default', org.id))?.snapshot()).toEqual({ ...org.snapshot(), memberCount: 0 });
      expect(await repos.organizations.findById('master', org.id)).toBeNull();
      expect(await repos.organizations.findById('default', 'not-a-uuid')).toBeNull();
      expect((await repos.organizations.findByDomain('default', `B-${suffix}.example`))?.id).toBe(org.id);
      expect(await repos.organizations.findByDomain('master', `b-${suffix}.example`)).toBeNull();

      await expect(insert(anOrganization('default', { slug: org.slug }))).rejects.toMatchObject({ code: 'ORGANIZATION_EXISTS' });
      await expect(insert(anOrganization('default', { domains: [`a-${suffix}.example`] }))).rejects.toMatchObject({
        code: 'ORGANIZATION_EXISTS',
      });
      expect((await repos.organizations.listEnforcedDomains('default')).filter((d) => d.domain.endsWith(`${suffix}.example`))).toEqual([]);
      const enforcing = Organization.create({
        id: crypto.randomUUID(),
        realmId: 'default',
        name: 'Enforcing',
        slug: `enforcing-${suffix}`,
        domains: [`sso-${suffix}.example`],
        identityProvider: 'corp',
        requireIdentityProvider: true,
        createdAt: now,
      });
      await insert(enforcing);
      expect(await repos.organizations.listEnforcedDomains('default')).toContainEqual({
        domain: `sso-${suffix}.example`,
        organizationId: enforcing.id,
      });
      expect((await repos.organizations.listByIdentityProvider('default', 'corp')).map((o) => o.id)).toContain(enforcing.id);
      const elsewhere = anOrganization('master', { slug: org.slug, domains: [`a-${suffix}.example`] });
      await insert(elsewhere);

      org.update({ domains: [`c-${suffix}.example`], name: 'Renamed' }, at(60));
      await repos.tx.run(() => repos.organizations.save(org));
      expect(await repos.organizations.findByDomain('default', `a-${suffix}.example`)).toBeNull();
      expect((await repos.organizations.findByDomain('default', `c-${suffix}.example`))?.name).toBe('Renamed');
      const taken = anOrganization('default', { domains: [`c-${suffix}.example`] });
      await expect(insert(taken)).rejects.toMatchObject({ code: 'ORGANIZATION_EXISTS' });
    });

    it('lists a realm’s organizations oldest first with the total, searching name and slug', async () => {
      const tag = `lst${Math.random().toString(36).slice(2, 8)}`;
      const orgs = [
        anOrganization('default', { slug: `${tag}-1` }),
        anOrganization('default', { slug: `${tag}-2` }),
        anOrganization('default', { slug: `${tag}-3` }),
      ];
      for (const org of orgs) await insert(org);
      const page = await repos.organizations.list({ realmId: 'default', page: 2, limit: 2, search: tag.toUpperCase() });
      expect(page.total).toBe(3);
      expect(page.organizations.map((o) => o.id)).toEqual([orgs.map((o) => o.id).sort()[2]]);
      expect((await repos.organizations.list({ realmId: 'default', page: 1, limit: 10, search: '%' })).total).toBe(0);
    });

    it('adds members once, counts them, lists them in the order they joined, and gives the claim of a member only', async () => {
      const org = anOrganization();
      await insert(org);
      const [a, b, c] = [await aMember(), await aMember(), await aMember()];
      await repos.tx.run(async () => {
        expect(
          await repos.members.add({ organizationId: org.id, realmId: 'default', userId: b.id, roles: ['org-admin'], joinedAt: at(2) }),
        ).toBe(true);
        expect(await repos.members.add({ organizationId: org.id, realmId: 'default', userId: a.id, roles: [], joinedAt: at(1) })).toBe(
          true,
        );
        expect(
          await repos.members.add({ organizationId: org.id, realmId: 'default', userId: c.id, roles: ['org-admin'], joinedAt: at(3) }),
        ).toBe(true);
        expect(await repos.members.add({ organizationId: org.id, realmId: 'default', userId: a.id, roles: ['x'], joinedAt: at(4) })).toBe(
          false,
        );
      });
      expect((await repos.organizations.findById('default', org.id))?.memberCount).toBe(3);
      expect(await repos.members.countWithRole(org.id, 'org-admin')).toBe(2);
      const page = await repos.members.list(org.id, 1, 2);
      expect(page).toEqual({
        total: 3,
        members: [
          { userId: a.id, email: a.email, roles: [], joinedAt: at(1) },
          { userId: b.id, email: b.email, roles: ['org-admin'], joinedAt: at(2) },
        ],
      });
      // Pages past the middle are read from the end: the same order, the same rows.
      expect((await repos.members.list(org.id, 2, 2)).members.map((m) => m.userId)).toEqual([c.id]);
      expect((await repos.members.list(org.id, 1, 3)).members.map((m) => m.userId)).toEqual([a.id, b.id, c.id]);
      expect((await repos.members.list(org.id, 3, 1)).members.map((m) => m.userId)).toEqual([c.id]);
      expect((await repos.members.list(org.id, 2, 1)).members.map((m) => m.userId)).toEqual([b.id]);
      expect(await repos.members.list(org.id, 3, 2)).toEqual({ total: 3, members: [] });
      expect(await repos.members.setRoles(org.id, c.id, ['billing'])).toBe(true);
      expect(await repos.members.find(org.id, c.id)).toEqual({
        organizationId: org.id,
        realmId: 'default',
        userId: c.id,
        roles: ['billing'],
        joinedAt: at(3),
      });
      expect(await repos.members.claim('default', org.id, c.id)).toEqual({ id: org.id, slug: org.slug, roles: ['billing'] });
      expect(await repos.members.claim('master', org.id, c.id)).toBeNull();
      expect(await repos.members.listForUser('default', c.id)).toEqual([
        { id: org.id, name: org.name, slug: org.slug, roles: ['billing'] },
      ]);

      expect(await repos.tx.run(() => repos.members.remove(org.id, c.id))).toBe(true);
      expect(await repos.members.remove(org.id, c.id)).toBe(false);
      expect(await repos.members.claim('default', org.id, c.id)).toBeNull();
      expect(await repos.members.setRoles(org.id, c.id, [])).toBe(false);
      // A deleted user leaves the organization, and the count follows.
      await repos.users.delete('default', a.id);
      expect((await repos.organizations.findById('default', org.id))?.memberCount).toBe(1);
      expect(await repos.tx.run(() => repos.organizations.delete('default', org.id))).toBe(true);
      expect(await repos.members.find(org.id, b.id)).toBeNull();
      expect(await repos.members.listForUser('default', b.id)).toEqual([]);
      expect(await repos.organizations.delete('default', org.id)).toBe(false);
    });

    it('keeps one pending invitation per address, redeems a pending one once, and revokes only pending ones of its organization', async () => {
      const org = anOrganization();
      const other = anOrganization();
      await insert(org);
      await insert(other);
      const first = anInvitation(org, 'bob@example.com');
      const second = anInvitation(org, 'bob@example.com', at(10));
      const carol = anInvitation(org, 'carol@example.com', at(20));
      await repos.tx.run(() => repos.invitations.insertReplacingPending(first, now));
      await repos.tx.run(() => repos.invitations.insertReplacingPending(second, at(10)));
      await repos.tx.run(() => repos.invitations.insertReplacingPending(carol, at(20)));
      expect((await repos.invitations.findByTokenHash(first.tokenHash))?.statusAt(at(30))).toBe('replaced');
      expect((await repos.invitations.findByTokenHash(second.tokenHash))?.snapshot()).toEqual(second.snapshot());
      expect((await repos.invitations.listPending(org.id, at(30))).map((i) => i.id)).toEqual([carol.id, second.id]);

      expect(await repos.invitations.accept(first.id, at(30))).toBe(false);
      expect(await repos.invitations.revoke(other.id, second.id, at(30))).toBe(false);
      expect(await repos.invitations.accept(second.id, at(30))).toBe(true);
      expect(await repos.invitations.accept(second.id, at(31))).toBe(false);
      expect(await repos.invitations.revoke(org.id, second.id, at(31))).toBe(false);
      expect((await repos.invitations.findByTokenHash(second.tokenHash))?.statusAt(at(31))).toBe('accepted');

      const expiry = 7 * 24 * 3600;
      expect(await repos.invitations.listPending(org.id, at(20 + expiry))).toEqual([]);
      expect(await repos.invitations.accept(carol.id, at(20 + expiry))).toBe(false);
      expect((await repos.invitations.findByTokenHash(carol.tokenHash))?.statusAt(at(20 + expiry))).toBe('expired');
      expect(await repos.invitations.revoke(org.id, carol.id, at(40))).toBe(true);
      expect(await repos.invitations.findByTokenHash('unknown')).toBeNull();
    });
  });
}

contract('in-memory fakes', async () => {
  const store = new OrganizationStore();
  const users = new InMemoryUserRepository();
  const members = new InMemoryOrganizationMemberRepository(store, users);
  // A deleted user's memberships go with it, as the foreign key takes them.
  const deleteUser = users.delete.bind(users);
  users.delete = async (realmId: string, id: string) => {
    for (const [k, m] of store.members) if (m.userId === id) store.members.delete(k);
    return deleteUser(realmId, id);
  };
  return {
    repos: {
      organizations: new InMemoryOrganizationRepository(store),
      members,
      invitations: new InMemoryOrganizationInvitationRepository(store),
      users,
      tx: immediateTransaction,
    },
    teardown: async () => undefined,
  };
});

contract('TypeORM on the database', async () => {
  const t: TestApp = await createTestApp();
  return {
    repos: {
      organizations: t.app.get(OrganizationRepository),
      members: t.app.get(OrganizationMemberRepository),
      invitations: t.app.get(OrganizationInvitationRepository),
      users: t.app.get(UserRepository),
      tx: t.app.get(Transaction),
    },
    teardown: () => t.close(),
  };
});
