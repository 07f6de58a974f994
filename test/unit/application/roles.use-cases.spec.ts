import { AdminActor } from '../../../src/application/admin/admin-actor';
import { CreateUserUseCase } from '../../../src/application/admin/create-user.use-case';
import { NewPassword } from '../../../src/application/account/new-password';
import { SetUserAppMetadataUseCase } from '../../../src/application/admin/set-user-app-metadata.use-case';
import { SetUserRolesUseCase } from '../../../src/application/admin/set-user-roles.use-case';
import { CreateRoleUseCase } from '../../../src/application/roles/create-role.use-case';
import { DeleteRoleUseCase } from '../../../src/application/roles/delete-role.use-case';
import { ListRolesUseCase } from '../../../src/application/roles/list-roles.use-case';
import { realmDefaultsFrom } from '../../../src/application/realm/realm-defaults';
import { loadConfig } from '../../../src/config/load-config';
import { Realm } from '../../../src/domain/realm/realm';
import { aUser } from '../../builders/user.builder';
import { InMemoryRoleRepository } from '../../fakes/in-memory-role.repository';
import { InMemoryUserRepository } from '../../fakes/in-memory-user.repository';
import { FakePasswordHasher, FixedClock, immediateTransaction, InMemoryAuditLog, SetPasswordBlocklist } from '../../fakes/simple-fakes';

const clock = new FixedClock();
const admin: AdminActor = { id: 'a1', realmId: 'default', superAdmin: false, hidesSuperAdmins: false, ip: '10.0.0.1' };
const superAdmin: AdminActor = { id: 'root', realmId: 'master', superAdmin: true, hidesSuperAdmins: false, ip: null };
const aRealm = (id: string) => Realm.create({ id, name: id, now: clock.now() }, realmDefaultsFrom(loadConfig({})));

function fixture(users = new InMemoryUserRepository()) {
  const roles = new InMemoryRoleRepository(users);
  const audit = new InMemoryAuditLog();
  return {
    users,
    roles,
    audit,
    create: new CreateRoleUseCase(roles, audit, immediateTransaction, clock),
    remove: new DeleteRoleUseCase(roles, audit, immediateTransaction, clock),
    list: new ListRolesUseCase(roles),
    assign: new SetUserRolesUseCase(users, roles, audit, immediateTransaction, clock),
    metadata: new SetUserAppMetadataUseCase(users, audit, immediateTransaction, clock),
  };
}

describe('realm roles', () => {
  it('lists the built-ins first, then the defined roles by name', async () => {
    const f = fixture();
    await f.create.execute({ actor: admin, realmId: 'default', name: 'teacher', description: 'Grades' });
    await f.create.execute({ actor: admin, realmId: 'default', name: 'auditor' });
    const realm = aRealm('default');
    expect((await f.list.execute({ realm })).map((r) => [r.name, r.builtIn])).toEqual([
      ['realm-admin', true],
      ['auditor', false],
      ['teacher', false],
    ]);
    expect(f.audit.types()).toEqual(['role.created', 'role.created']);
  });

  it('refuses a second role of the same name with ROLE_EXISTS, and keeps realms apart', async () => {
    const f = fixture();
    await f.create.execute({ actor: admin, realmId: 'default', name: 'teacher' });
    await expect(f.create.execute({ actor: admin, realmId: 'default', name: 'teacher' })).rejects.toMatchObject({ code: 'ROLE_EXISTS' });
    await expect(f.create.execute({ actor: superAdmin, realmId: 'acme', name: 'teacher' })).resolves.toBeDefined();
  });

  it('assigns only roles the realm builds in or defines, naming each unknown one', async () => {
    const user = aUser();
    const f = fixture(new InMemoryUserRepository([user]));
    await f.create.execute({ actor: superAdmin, realmId: 'acme', name: 'pupil' });
    const refused = f.assign.execute({ actor: admin, realmId: 'default', userId: user.id, roles: ['realm-admin', 'pupil', 'ghost'] });
    await expect(refused).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      meta: {
        details: [
          { field: 'roles', message: '"pupil" is not a role of this realm; define it first' },
          { field: 'roles', message: '"ghost" is not a role of this realm; define it first' },
        ],
      },
    });
    await f.create.execute({ actor: admin, realmId: 'default', name: 'pupil' });
    await f.assign.execute({ actor: admin, realmId: 'default', userId: user.id, roles: ['realm-admin', 'pupil'] });
    expect((await f.users.findById('default', user.id))!.roles).toEqual(['realm-admin', 'pupil']);
  });

  it('creates users with defined roles only', async () => {
    const f = fixture();
    const create = new CreateUserUseCase(
      f.users,
      f.roles,
      new NewPassword(
        f.users,
        {} as never,
        {} as never,
        new FakePasswordHasher(),
        new SetPasswordBlocklist(new Set()),
        {} as never,
        f.audit,
      ),
      {} as never,
      f.audit,
      immediateTransaction,
      clock,
    );
    const realm = aRealm('default');
    const input = { actor: admin, realm, email: 'new@example.com', name: 'New User', password: 'a long enough passphrase 42' };
    await expect(create.execute({ ...input, roles: ['ghost'] })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(f.users.all()).toHaveLength(0);
    await f.create.execute({ actor: admin, realmId: 'default', name: 'ghost' });
    expect((await create.execute({ ...input, roles: ['ghost'] })).roles).toEqual(['ghost']);
  });

  it('deletes a role from every holder of its realm, and nowhere else', async () => {
    const [a, b, other] = [aUser(), aUser(), aUser({ realmId: 'acme' })];
    const f = fixture(new InMemoryUserRepository([a, b, other]));
    await f.create.execute({ actor: admin, realmId: 'default', name: 'teacher' });
    await f.create.execute({ actor: superAdmin, realmId: 'acme', name: 'teacher' });
    await f.assign.execute({ actor: admin, realmId: 'default', userId: a.id, roles: ['teacher', 'realm-admin'] });
    await f.assign.execute({ actor: admin, realmId: 'default', userId: b.id, roles: ['teacher'] });
    await f.assign.execute({ actor: superAdmin, realmId: 'acme', userId: other.id, roles: ['teacher'] });
    expect(await f.remove.execute({ actor: admin, realmId: 'default', name: 'teacher' })).toEqual({ users: 2 });
    expect((await f.users.findById('default', a.id))!.roles).toEqual(['realm-admin']);
    expect((await f.users.findById('default', b.id))!.roles).toEqual([]);
    expect((await f.users.findById('acme', other.id))!.roles).toEqual(['teacher']);
    expect(f.audit.entries.at(-1)).toMatchObject({ type: 'role.deleted', actorId: 'a1', details: { name: 'teacher', users: 2 } });
    await expect(f.remove.execute({ actor: admin, realmId: 'default', name: 'teacher' })).rejects.toMatchObject({ code: 'ROLE_NOT_FOUND' });
  });

  it.each(['realm-admin', 'super-admin'])('refuses to delete the built-in %s with INVALID_USER_STATE', async (name) => {
    await expect(fixture().remove.execute({ actor: superAdmin, realmId: 'master', name })).rejects.toMatchObject({
      code: 'INVALID_USER_STATE',
    });
  });

  it('records the command line as the actor of a role change', async () => {
    const f = fixture();
    await f.create.execute({ actor: null, realmId: 'master', name: 'ops' });
    await f.remove.execute({ actor: superAdmin, realmId: 'master', name: 'ops' });
    expect(f.audit.entries.map((e) => [e.type, e.actorId, e.details?.by])).toEqual([
      ['role.created', null, 'cli'],
      ['role.deleted', 'root', undefined],
    ]);
  });
});

describe('app metadata', () => {
  it('replaces the metadata and audits before and after', async () => {
    const user = aUser();
    const f = fixture(new InMemoryUserRepository([user]));
    await f.metadata.execute({ actor: admin, realmId: 'default', userId: user.id, appMetadata: { plan: 'pro' } });
    const updated = await f.metadata.execute({ actor: admin, realmId: 'default', userId: user.id, appMetadata: { schoolId: 'n-42' } });
    expect(updated.appMetadata).toEqual({ schoolId: 'n-42' });
    expect((await f.users.findById('default', user.id))!.appMetadata).toEqual({ schoolId: 'n-42' });
    expect(f.audit.entries.at(-1)).toMatchObject({
      type: 'user.app_metadata_changed',
      userId: user.id,
      details: { before: { plan: 'pro' }, after: { schoolId: 'n-42' } },
    });
  });

  it('stores nothing over the limits', async () => {
    const root = aUser({ realmId: 'master', roles: ['super-admin'] });
    const f = fixture(new InMemoryUserRepository([root]));
    await expect(
      f.metadata.execute({ actor: superAdmin, realmId: 'master', userId: root.id, appMetadata: { a: 'x'.repeat(2000) } }),
    ).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    expect((await f.users.findById('master', root.id))!.appMetadata).toEqual({});
    expect(f.audit.entries).toHaveLength(0);
  });
});
