import { NewPasswordChange } from '../../../src/application/account/new-password';
import { aUser } from '../../builders/user.builder';
import { authFixture } from './auth-fixture';

const PASSWORD = 'correct horse battery staple';
const NEW_HASH = 'hashed:a brand new passphrase 42';

/** One user with two sessions, a pending reset link and a sign-in waiting for its second factor. */
async function fixture() {
  const user = aUser({ email: 'ada@example.com' });
  const f = authFixture([user]);
  const sessionIds: string[] = [];
  for (let i = 0; i < 2; i += 1) {
    const result = await f.login.execute({ realm: f.realm, email: user.email, password: PASSWORD, client: f.client });
    if (result.kind !== 'authenticated') throw new Error('expected a session');
    sessionIds.push(result.sessionId);
  }
  for (const kind of ['password_reset', 'mfa'] as const) {
    await f.oneTimeTokens.insert({
      tokenHash: `pending-${kind}`,
      realmId: 'default',
      userId: user.id,
      kind,
      email: user.email,
      payload: {},
      attempts: 0,
      createdAt: f.clock.now(),
      expiresAt: new Date(f.clock.now().getTime() + 3_600_000),
      usedAt: null,
    });
  }
  const pending = (kind: 'password_reset' | 'mfa') => f.oneTimeTokens.rows.get(`pending-${kind}`)!.usedAt === null;
  /** Sets NEW_HASH on the user as stored, with the path's own choices. */
  const setNew = async (choices: Pick<NewPasswordChange, 'revokeReason' | 'keepSessionId' | 'voidMfaChallenges' | 'event'>) =>
    f.newPassword.set({
      realm: f.realm,
      user: (await f.userRepo.findById('default', user.id))!,
      passwordHash: NEW_HASH,
      now: f.clock.now(),
      ...choices,
    });
  return { ...f, user, sessionIds, pending, setNew };
}

describe('NewPassword', () => {
  it('refuses what the realm refuses, and the current password again, naming the given field', async () => {
    const f = authFixture();
    const candidate = { realm: f.realm, email: 'ada@example.com', field: 'newPassword' };
    await expect(f.newPassword.hash({ ...candidate, password: 'password1234' })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      meta: { details: [{ field: 'newPassword', message: expect.stringContaining('common') }] },
    });
    // NFKC: the full-width letters are the same password.
    await expect(
      f.newPassword.hash({ ...candidate, password: 'ｃｏｒｒｅｃｔ horse battery staple', differentFrom: PASSWORD }),
    ).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      meta: { details: [{ field: 'newPassword', message: 'must differ from the current password' }] },
    });
    expect(await f.newPassword.hash({ ...candidate, password: 'a brand new passphrase 42', differentFrom: PASSWORD })).toBe(
      'hashed:a brand new passphrase 42',
    );
  });

  it('stores the hash, ends every session but the kept one, voids reset links, tells the owner and records the event', async () => {
    const f = await fixture();
    const [kept, other] = f.sessionIds;
    const revoked = await f.setNew({
      revokeReason: 'password_changed',
      keepSessionId: kept,
      voidMfaChallenges: false,
      event: { type: 'password.changed', sessionId: kept, ip: '198.51.100.1', details: (n) => ({ otherSessionsRevoked: n }) },
    });
    expect(revoked).toBe(1);
    expect((await f.userRepo.findById('default', f.user.id))!.passwordHash).toBe(NEW_HASH);
    expect(f.sessions.rows.get(kept)!.revokedAt).toBeNull();
    expect(f.sessions.rows.get(other)!.revokedAt).not.toBeNull();
    expect([f.pending('password_reset'), f.pending('mfa')]).toEqual([false, true]);
    expect(f.mailer.sent.at(-1)!.to).toBe('ada@example.com');
    expect(f.audit.entries.at(-1)).toEqual({
      type: 'password.changed',
      realmId: 'default',
      userId: f.user.id,
      sessionId: kept,
      ip: '198.51.100.1',
      at: f.clock.now(),
      details: { otherSessionsRevoked: 1 },
    });
  });

  it('voids pending MFA challenges too when asked, and ends every session without a kept one', async () => {
    const f = await fixture();
    const revoked = await f.setNew({
      revokeReason: 'password_reset',
      voidMfaChallenges: true,
      event: { type: 'user.password_reset', ip: null, details: (n) => ({ sessionsRevoked: n }) },
    });
    expect(revoked).toBe(2);
    expect([f.pending('password_reset'), f.pending('mfa')]).toEqual([false, false]);
  });
});
