import { AdminActor } from '../../../src/application/admin/admin-actor';
import { DeleteHookUseCase } from '../../../src/application/hooks/delete-hook.use-case';
import { ListHooksUseCase } from '../../../src/application/hooks/list-hooks.use-case';
import { PutHookUseCase } from '../../../src/application/hooks/put-hook.use-case';
import { RotateHookSecretUseCase } from '../../../src/application/hooks/rotate-hook-secret.use-case';
import { RegisterUseCase } from '../../../src/application/auth/register.use-case';
import { DomainError } from '../../../src/domain/errors';
import { useCaseFixture } from './fixture';

const actor: AdminActor = { id: 'admin-1', realmId: 'default', superAdmin: false, hidesSuperAdmins: false, ip: '198.51.100.2' };
const URL = 'https://hooks.example.com/sign-in';

function hooks() {
  const f = useCaseFixture();
  const put = f.build(PutHookUseCase);
  return {
    ...f,
    put: (name: string, input: Partial<Parameters<PutHookUseCase['execute']>[0]> = {}) =>
      put.execute({ actor, realmId: 'default', name, url: URL, ...input }),
    rotate: f.build(RotateHookSecretUseCase),
    remove: f.build(DeleteHookUseCase),
    list: f.build(ListHooksUseCase),
    register: f.build(RegisterUseCase),
  };
}

describe('hooks over the admin API', () => {
  it('creates each hook with its own secret and its default failure policy; a second PUT replaces all but the secret', async () => {
    const f = hooks();
    const created = await f.put('before-sign-in');
    expect(created.secret).toMatch(/^whsec_/);
    expect(created.hook.snapshot()).toMatchObject({ name: 'before-sign-in', enabled: true, timeoutMs: 2000, failure: 'deny' });
    expect((await f.put('token-claims')).hook.failure).toBe('allow');
    expect((await f.put('before-registration')).hook.failure).toBe('deny');

    const replaced = await f.put('before-sign-in', { enabled: false, timeoutMs: 300, failure: 'allow' });
    expect(replaced.secret).toBeNull();
    expect(replaced.hook.secret).toBe(created.secret);
    const again = await f.put('before-sign-in');
    expect(again.hook.snapshot()).toMatchObject({ enabled: true, timeoutMs: 2000, failure: 'deny' });
    expect((await f.list.execute({ realmId: 'default' })).map((h) => h.name)).toEqual([
      'before-registration',
      'before-sign-in',
      'token-claims',
    ]);
    expect(f.audit.entries.filter((e) => e.type === 'hook.updated').at(-1)?.details).toEqual({
      name: 'before-sign-in',
      created: false,
      host: 'hooks.example.com',
      enabled: true,
      timeoutMs: 2000,
      failure: 'deny',
    });
  });

  it('refuses other names (NOT_FOUND), timeouts outside 100–5000 ms and URLs the address rules refuse', async () => {
    const f = hooks();
    await expect(f.put('after-sign-in')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(f.put('token-claims', { timeoutMs: 99 })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(f.put('token-claims', { timeoutMs: 5001 })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(f.put('token-claims', { url: 'https://internal.example/hook' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(f.put('token-claims', { url: 'http://hooks.example.com/' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(await f.list.execute({ realmId: 'default' })).toEqual([]);
  });

  it('rotates the secret and deletes, audited; an absent hook is NOT_FOUND', async () => {
    const f = hooks();
    const { secret } = await f.put('token-claims');
    const rotated = await f.rotate.execute({ actor, realmId: 'default', name: 'token-claims' });
    expect(rotated.secret).not.toBe(secret);
    expect(rotated.hook.secret).toBe(rotated.secret);
    await f.remove.execute({ actor, realmId: 'default', name: 'token-claims' });
    await expect(f.remove.execute({ actor, realmId: 'default', name: 'token-claims' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(f.rotate.execute({ actor, realmId: 'default', name: 'token-claims' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(f.audit.types().filter((type) => type.startsWith('hook.'))).toEqual(['hook.updated', 'hook.secret_rotated', 'hook.deleted']);
  });
});

describe('registration and the before-registration hook', () => {
  it('asks with the sign-up’s fields; a refusal writes no user and sends no email', async () => {
    const f = hooks();
    f.hooks.admit = async () => {
      throw new DomainError('HOOK_DENIED', 'Invitation only');
    };
    const input = {
      realm: f.realm,
      email: 'Ada@Example.com',
      password: 'correct horse battery staple',
      name: 'Ada Lovelace',
      ip: '203.0.113.9',
    };
    await expect(f.register.execute(input)).rejects.toMatchObject({ code: 'HOOK_DENIED', message: 'Invitation only' });
    expect(f.hooks.registrations).toEqual([
      expect.objectContaining({ email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace', method: 'password', ip: '203.0.113.9' }),
    ]);
    expect(await f.users.findByEmail(f.realm.id, 'ada@example.com')).toBeNull();
    expect(f.mailer.sent).toEqual([]);
    expect(f.audit.types()).not.toContain('user.registered');
  });
});
