import { Invitation } from '../../../src/domain/organization/invitation';
import { emailDomain, Organization } from '../../../src/domain/organization/organization';
import {
  decideOrganization,
  leavesNoOrgAdmin,
  ORGANIZATION_ACTIONS,
  unknownOrganizationRoles,
} from '../../../src/domain/organization/organization-policy';

const now = new Date('2026-11-25T12:00:00.000Z');
const create = (over: Partial<Parameters<typeof Organization.create>[0]> = {}) =>
  Organization.create({ id: 'o1', realmId: 'default', name: 'Acme', slug: 'acme', createdAt: now, ...over });

describe('organization policy: who manages an organization', () => {
  it('admits realm administrators to every action, an org-admin of the organization’s realm, and nobody else', () => {
    for (const action of ORGANIZATION_ACTIONS) {
      expect(decideOrganization({ kind: 'realm-administrator' }, 'default', action)).toEqual({ allowed: true, delegated: false });
      expect(decideOrganization({ kind: 'user', realmId: 'default', membershipRoles: ['org-admin'] }, 'default', action)).toEqual({
        allowed: true,
        delegated: true,
      });
      expect(decideOrganization({ kind: 'user', realmId: 'default', membershipRoles: ['billing'] }, 'default', action)).toEqual({
        allowed: false,
        reason: 'not-an-org-admin',
      });
      expect(decideOrganization({ kind: 'user', realmId: 'default', membershipRoles: null }, 'default', action)).toEqual({
        allowed: false,
        reason: 'not-a-member',
      });
      expect(decideOrganization({ kind: 'user', realmId: 'other', membershipRoles: ['org-admin'] }, 'default', action)).toEqual({
        allowed: false,
        reason: 'not-a-member',
      });
    }
  });

  it('grants org-admin and the realm’s defined roles only, never the realm’s administrator roles', () => {
    const defined = new Set(['billing', 'realm-admin']);
    expect(unknownOrganizationRoles(['org-admin', 'billing'], defined)).toEqual([]);
    expect(unknownOrganizationRoles(['realm-admin', 'super-admin', 'nope', 'nope'], defined)).toEqual([
      'realm-admin',
      'super-admin',
      'nope',
    ]);
  });

  it('keeps an org-admin from removing or demoting the last org-admin; a realm administrator may', () => {
    expect(leavesNoOrgAdmin(true, ['org-admin'], [], 1)).toBe(true);
    expect(leavesNoOrgAdmin(true, ['org-admin'], null, 1)).toBe(true);
    expect(leavesNoOrgAdmin(true, ['org-admin'], ['org-admin', 'billing'], 1)).toBe(false);
    expect(leavesNoOrgAdmin(true, ['org-admin'], [], 2)).toBe(false);
    expect(leavesNoOrgAdmin(true, ['billing'], null, 1)).toBe(false);
    expect(leavesNoOrgAdmin(false, ['org-admin'], null, 1)).toBe(false);
  });
});

describe('Organization', () => {
  it('checks its fields, naming the one refused', () => {
    expect(create({ domains: ['acme.example', 'acme.test'] }).snapshot()).toMatchObject({
      slug: 'acme',
      domains: ['acme.example', 'acme.test'],
    });
    for (const [over, field] of [
      [{ slug: 'Acme' }, 'slug'],
      [{ slug: '-acme' }, 'slug'],
      [{ name: '  ' }, 'name'],
      [{ domains: ['Acme.example'] }, 'domains'],
      [{ domains: ['localhost'] }, 'domains'],
      [{ domains: ['a.example', 'a.example'] }, 'domains'],
      [{ requireIdentityProvider: true }, 'requireIdentityProvider'],
    ] as [Partial<Parameters<typeof Organization.create>[0]>, string][]) {
      expect(() => create(over)).toThrow(
        expect.objectContaining({ code: 'VALIDATION_FAILED', meta: { details: [expect.objectContaining({ field })] } }),
      );
    }
  });

  it('changes any field but the id, says which changed, and keeps requireIdentityProvider tied to a provider', () => {
    const organization = create({ identityProvider: 'corp' });
    const later = new Date(now.getTime() + 1000);
    expect(organization.update({ name: 'Acme', requireIdentityProvider: true }, later)).toEqual(['requireIdentityProvider']);
    expect(organization.updatedAt).toEqual(later);
    expect(() => organization.update({ identityProvider: null }, later)).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
    expect(organization.update({}, new Date(later.getTime() + 1000))).toEqual([]);
    expect(organization.updatedAt).toEqual(later);
  });

  it('owns the addresses of its domains', () => {
    const organization = create({ domains: ['acme.example'] });
    expect(organization.ownsAddress('bob@ACME.example')).toBe(true);
    expect(organization.ownsAddress('bob@sub.acme.example')).toBe(false);
    expect(emailDomain('not an address')).toBeNull();
  });
});

describe('Invitation', () => {
  it('lives 7 days and is pending until then', () => {
    const invitation = Invitation.issue({
      id: 'i1',
      organizationId: 'o1',
      realmId: 'default',
      email: 'bob@acme.example',
      roles: ['billing', 'billing'],
      tokenHash: 'h',
      invitedBy: 'u1',
      now,
    });
    expect(invitation.roles).toEqual(['billing']);
    expect(invitation.expiresAt.getTime() - now.getTime()).toBe(7 * 24 * 3600 * 1000);
    expect(invitation.statusAt(new Date(invitation.expiresAt.getTime() - 1))).toBe('pending');
    expect(invitation.statusAt(invitation.expiresAt)).toBe('expired');
    expect(Invitation.restore({ ...invitation.snapshot(), status: 'replaced', endedAt: now }).isPendingAt(now)).toBe(false);
  });
});
