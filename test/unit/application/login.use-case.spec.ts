import { aUser } from '../../builders/user.builder';
import { authFixture } from './auth-fixture';

const PASSWORD = 'correct horse battery staple';

describe('LoginUseCase', () => {
  it('opens a session and returns tokens for the right password, recording login.succeeded', async () => {
    const user = aUser();
    const f = authFixture([user]);
    const result = await f.login.execute({ realm: f.realm, email: user.email.toUpperCase(), password: PASSWORD, client: f.client });
    expect(result.kind).toBe('authenticated');
    expect(f.sessions.rows.size).toBe(1);
    expect(f.audit.types()).toEqual(['login.succeeded']);
    expect((await f.userRepo.findById('default', user.id))?.lastLoginAt).toEqual(f.clock.now());
  });

  it('spends a dummy comparison on an unknown email and fails like a wrong password', async () => {
    const f = authFixture([aUser({ email: 'known@example.com' })]);
    await expect(
      f.login.execute({ realm: f.realm, email: 'ghost@example.com', password: PASSWORD, client: f.client }),
    ).rejects.toMatchObject({
      code: 'INVALID_CREDENTIALS',
    });
    await expect(
      f.login.execute({ realm: f.realm, email: 'known@example.com', password: 'wrong password!', client: f.client }),
    ).rejects.toMatchObject({
      code: 'INVALID_CREDENTIALS',
    });
    expect(f.hasher.dummyComparisons).toBe(1);
    expect(f.audit.types()).toEqual(['login.failed', 'login.failed']);
  });

  describe('when concurrent attempts lock the account while a password is being checked', () => {
    /** The other attempts land while this one's password is being compared. */
    function lockedDuringCheck(user = aUser(), change?: (f: ReturnType<typeof authFixture>) => Promise<void>) {
      const f = authFixture([user]);
      const verify = f.hasher.verify.bind(f.hasher);
      f.hasher.verify = async (password: string, hash: string) => {
        const matches = await verify(password, hash);
        if (change) await change(f);
        else for (let i = 0; i < 3; i++) await f.userRepo.recordFailedLogin('default', user.id, f.realm.policy.lockout, f.clock.now());
        return matches;
      };
      return f;
    }

    it('answers the right password ACCOUNT_LOCKED and opens no session', async () => {
      const user = aUser();
      const f = lockedDuringCheck(user);
      await expect(f.login.execute({ realm: f.realm, email: user.email, password: PASSWORD, client: f.client })).rejects.toMatchObject({
        code: 'ACCOUNT_LOCKED',
        meta: { retryAfterSeconds: 900 },
      });
      expect(f.sessions.rows.size).toBe(0);
      expect((await f.userRepo.findById('default', user.id))?.lastLoginAt).toBeNull();
      expect(f.audit.entries.at(-1)).toMatchObject({ type: 'login.failed', details: { reason: 'locked', passwordMatched: true } });
    });

    it('answers a wrong password ACCOUNT_LOCKED too, without counting it', async () => {
      const user = aUser();
      const f = lockedDuringCheck(user);
      await expect(
        f.login.execute({ realm: f.realm, email: user.email, password: 'wrong password!', client: f.client }),
      ).rejects.toMatchObject({ code: 'ACCOUNT_LOCKED' });
      expect((await f.userRepo.findById('default', user.id))?.failedLoginCount).toBe(3);
    });

    it('issues no MFA challenge for the right password of an MFA user', async () => {
      const user = aUser({ mfaMethods: ['totp'] });
      const f = lockedDuringCheck(user);
      await expect(f.login.execute({ realm: f.realm, email: user.email, password: PASSWORD, client: f.client })).rejects.toMatchObject({
        code: 'ACCOUNT_LOCKED',
      });
      expect(f.oneTimeTokens.rows.size).toBe(0);
    });

    it('answers ACCOUNT_SUSPENDED when an administrator suspended the account meanwhile', async () => {
      const user = aUser();
      const f = lockedDuringCheck(user, async (fx) => {
        const stored = (await fx.userRepo.findById('default', user.id))!;
        stored.suspend(fx.clock.now());
        await fx.userRepo.save(stored);
      });
      await expect(f.login.execute({ realm: f.realm, email: user.email, password: PASSWORD, client: f.client })).rejects.toMatchObject({
        code: 'ACCOUNT_SUSPENDED',
      });
      expect(f.sessions.rows.size).toBe(0);
    });
  });

  it('locks the account after the 3rd consecutive wrong password and then refuses the right one with ACCOUNT_LOCKED', async () => {
    const user = aUser();
    const f = authFixture([user]);
    for (let i = 0; i < 3; i++) {
      await expect(
        f.login.execute({ realm: f.realm, email: user.email, password: 'wrong password!', client: f.client }),
      ).rejects.toMatchObject({
        code: 'INVALID_CREDENTIALS',
      });
    }
    expect(f.audit.types()).toContain('user.locked');
    await expect(f.login.execute({ realm: f.realm, email: user.email, password: PASSWORD, client: f.client })).rejects.toMatchObject({
      code: 'ACCOUNT_LOCKED',
      meta: { retryAfterSeconds: 900 },
    });
    f.clock.advance(900);
    await expect(f.login.execute({ realm: f.realm, email: user.email, password: PASSWORD, client: f.client })).resolves.toMatchObject({
      kind: 'authenticated',
    });
  });

  it('refuses a suspended account with the right password only', async () => {
    const user = aUser({ status: 'suspended' });
    const f = authFixture([user]);
    await expect(
      f.login.execute({ realm: f.realm, email: user.email, password: 'wrong password!', client: f.client }),
    ).rejects.toMatchObject({
      code: 'INVALID_CREDENTIALS',
    });
    await expect(f.login.execute({ realm: f.realm, email: user.email, password: PASSWORD, client: f.client })).rejects.toMatchObject({
      code: 'ACCOUNT_SUSPENDED',
    });
  });

  it('answers an MFA challenge instead of tokens when the user has a second factor, opening no session', async () => {
    const user = aUser({ mfaMethods: ['totp'] });
    const f = authFixture([user]);
    const result = await f.login.execute({ realm: f.realm, email: user.email, password: PASSWORD, client: f.client });
    expect(result).toMatchObject({ kind: 'mfa-required', methods: ['totp'], mfaToken: expect.any(String) });
    expect(f.sessions.rows.size).toBe(0);
    expect([...f.oneTimeTokens.rows.values()][0]).toMatchObject({ kind: 'mfa', userId: user.id });
  });
});
