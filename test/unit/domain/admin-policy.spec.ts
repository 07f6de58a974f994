import { ADMIN_ACTIONS, AdminActionName, decideAdmin, roleChangeRefusal } from '../../../src/domain/admin/admin-policy';
import { aUser } from '../../builders/user.builder';

const superAdmin = { realmId: 'master', roles: ['super-admin'] };
const masterAdmin = { realmId: 'master', roles: ['realm-admin'] };
const acmeAdmin = { realmId: 'acme', roles: ['realm-admin'] };
const root = aUser({ realmId: 'master', roles: ['super-admin'] });
const masterMember = aUser({ realmId: 'master', roles: ['realm-admin'] });
const acmeMember = aUser({ realmId: 'acme' });

const actions = Object.keys(ADMIN_ACTIONS) as AdminActionName[];
const outcome = (d: ReturnType<typeof decideAdmin>) => (d.allowed ? 'allowed' : d.reason);

describe('decideAdmin: the admin API authorisation rule', () => {
  it.each(actions)('lets the super-admin take %s in any realm, on anyone, seeing every session', (action) => {
    for (const [realm, target] of [
      ['master', root],
      ['acme', acmeMember],
      ['master', null],
    ] as const) {
      expect(decideAdmin(superAdmin, realm, action, target)).toEqual({ allowed: true, superAdmin: true, hidesSuperAdmins: false });
    }
  });

  it.each(actions)('lets a realm-admin take %s in its own realm, unless super-admin only', (action) => {
    const expected = 'superAdminOnly' in ADMIN_ACTIONS[action] ? 'super-admins-only' : 'allowed';
    expect(outcome(decideAdmin(acmeAdmin, 'acme', action, acmeMember))).toBe(expected);
    expect(outcome(decideAdmin(acmeAdmin, 'acme', action, null))).toBe(expected);
  });

  it.each(actions)('refuses %s to anyone but an administrator of the realm', (action) => {
    for (const caller of [
      acmeAdmin,
      masterAdmin,
      { realmId: 'default', roles: [] },
      { realmId: 'default', roles: ['auditor'] },
      // super-admin means nothing outside master; realm-admin nothing outside its realm.
      { realmId: 'default', roles: ['super-admin'] },
    ]) {
      expect(outcome(decideAdmin(caller, 'default', action, null))).toBe('not-an-administrator');
    }
  });

  it("keeps a realm-admin of master from master's settings, providers, roles, clients and hooks, and from anything of a super-admin", () => {
    const decided = Object.fromEntries(
      actions.map((action) => [
        action,
        [outcome(decideAdmin(masterAdmin, 'master', action, masterMember)), outcome(decideAdmin(masterAdmin, 'master', action, root))],
      ]),
    );
    expect(decided).toEqual({
      'users.list': ['allowed', 'allowed'],
      'users.create': ['allowed', 'allowed'],
      'user.read': ['allowed', 'allowed'],
      'user.delete': ['allowed', 'super-admin-target'],
      'user.suspend': ['allowed', 'super-admin-target'],
      'user.activate': ['allowed', 'super-admin-target'],
      'user.unlock': ['allowed', 'super-admin-target'],
      'user.reset-password': ['allowed', 'super-admin-target'],
      'user.reset-mfa': ['allowed', 'super-admin-target'],
      'user.set-roles': ['allowed', 'super-admin-target'],
      'user.set-app-metadata': ['allowed', 'super-admin-target'],
      'user.identity.unlink': ['allowed', 'super-admin-target'],
      'user.sessions.list': ['allowed', 'super-admin-target'],
      'user.sessions.revoke': ['allowed', 'super-admin-target'],
      'sessions.list': ['allowed', 'allowed'],
      'session.revoke': ['allowed', 'super-admin-target'],
      'events.list': ['allowed', 'allowed'],
      'realms.list': ['super-admins-only', 'super-admins-only'],
      'realms.create': ['super-admins-only', 'super-admins-only'],
      'realm.read': ['allowed', 'allowed'],
      'realm.update': ['guards-master', 'guards-master'],
      'roles.list': ['allowed', 'allowed'],
      'roles.create': ['guards-master', 'guards-master'],
      'role.delete': ['guards-master', 'guards-master'],
      'identity-providers.list': ['allowed', 'allowed'],
      'identity-providers.create': ['guards-master', 'guards-master'],
      'identity-provider.read': ['allowed', 'allowed'],
      'identity-provider.update': ['guards-master', 'guards-master'],
      'identity-provider.delete': ['guards-master', 'guards-master'],
      'webhooks.list': ['allowed', 'allowed'],
      'webhooks.create': ['allowed', 'allowed'],
      'webhook.read': ['allowed', 'allowed'],
      'webhook.update': ['allowed', 'allowed'],
      'webhook.delete': ['allowed', 'allowed'],
      'webhook.rotate-secret': ['allowed', 'allowed'],
      'webhook.deliveries.list': ['allowed', 'allowed'],
      'webhook.delivery.retry': ['allowed', 'allowed'],
      'clients.list': ['guards-master', 'guards-master'],
      'clients.create': ['guards-master', 'guards-master'],
      'client.read': ['guards-master', 'guards-master'],
      'client.update': ['guards-master', 'guards-master'],
      'client.delete': ['guards-master', 'guards-master'],
      'client.rotate-secret': ['guards-master', 'guards-master'],
      'resources.list': ['guards-master', 'guards-master'],
      'resources.create': ['guards-master', 'guards-master'],
      'resource.update': ['guards-master', 'guards-master'],
      'resource.delete': ['guards-master', 'guards-master'],
      'initial-access-tokens.create': ['guards-master', 'guards-master'],
      'hooks.list': ['guards-master', 'guards-master'],
      'hook.put': ['guards-master', 'guards-master'],
      'hook.delete': ['guards-master', 'guards-master'],
      'hook.rotate-secret': ['guards-master', 'guards-master'],
      'organizations.list': ['allowed', 'allowed'],
      'organizations.create': ['allowed', 'allowed'],
      'organization.read': ['allowed', 'allowed'],
      'organization.update': ['allowed', 'allowed'],
      'organization.delete': ['allowed', 'allowed'],
      'organization.members.list': ['allowed', 'allowed'],
      'organization.member.set-roles': ['allowed', 'allowed'],
      'organization.member.remove': ['allowed', 'allowed'],
      'organization.invitations.list': ['allowed', 'allowed'],
      'organization.invitations.create': ['allowed', 'allowed'],
      'organization.invitation.revoke': ['allowed', 'allowed'],
    });
    expect(decideAdmin(masterAdmin, 'master', 'sessions.list', null)).toEqual({ allowed: true, superAdmin: false, hidesSuperAdmins: true });
  });

  it('lets a realm-admin of another realm change its own realm settings, providers and clients: only master guards the super-admins', () => {
    for (const action of ['realm.update', 'identity-providers.create', 'roles.create', 'clients.create', 'clients.list'] as const) {
      expect(decideAdmin(acmeAdmin, 'acme', action, null)).toEqual({ allowed: true, superAdmin: false, hidesSuperAdmins: false });
    }
  });
});

describe('roleChangeRefusal', () => {
  it('keeps super-admin to master, granted and removed by super-admins only', () => {
    expect(roleChangeRefusal(true, 'acme', [], ['super-admin'])).toBe('super-admin-outside-master');
    expect(roleChangeRefusal(false, 'master', [], ['super-admin'])).toBe('super-admins-only');
    expect(roleChangeRefusal(false, 'master', ['super-admin'], [])).toBe('super-admins-only');
    expect(roleChangeRefusal(false, 'master', [], ['realm-admin'])).toBeNull();
    expect(roleChangeRefusal(true, 'master', ['realm-admin'], ['super-admin'])).toBeNull();
  });
});
