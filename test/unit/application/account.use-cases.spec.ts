import { AccountEmails } from '../../../src/application/account/account-emails';
import { AccountTakeover } from '../../../src/application/account/account-takeover';
import { RecentAuthentication } from '../../../src/application/sign-in/recent-authentication';
import { ChangePasswordUseCase } from '../../../src/application/auth/change-password.use-case';
import { EmailLinkTokens } from '../../../src/application/account/email-link-tokens';
import { NewPassword } from '../../../src/application/account/new-password';
import { ForgotPasswordUseCase } from '../../../src/application/auth/forgot-password.use-case';
import { ResendVerificationUseCase } from '../../../src/application/auth/resend-verification.use-case';
import { ResetPasswordUseCase } from '../../../src/application/auth/reset-password.use-case';
import { VerifyEmailUseCase } from '../../../src/application/auth/verify-email.use-case';
import { realmDefaultsFrom } from '../../../src/application/realm/realm-defaults';
import { Realm } from '../../../src/domain/realm/realm';
import { User, UserState } from '../../../src/domain/user/user';
import { aUser } from '../../builders/user.builder';
import { aPasskey } from '../../builders/webauthn-credential.builder';
import { InMemoryLinkedIdentityRepository } from '../../fakes/in-memory-linked-identity.repository';
import { InMemoryMfaCredentialRepository } from '../../fakes/in-memory-mfa-credential.repository';
import { FakeSecureTokens, immediateTransaction, SetPasswordBlocklist } from '../../fakes/simple-fakes';
import { authFixture } from './auth-fixture';

const PASSWORD = 'correct horse battery staple';
const NEW_PASSWORD = 'a brand new passphrase 42';

function tokenIn(text: string, path: string): string {
  const token = new RegExp(`${path}\\?token=([A-Za-z0-9_-]+)`).exec(text)?.[1];
  if (!token) throw new Error(`no ${path} link in ${text}`);
  return token;
}

/** The account use cases on in-memory fakes, around one user. */
function accountFixture(overrides: Partial<UserState> = {}) {
  const user = aUser({ email: 'ada@example.com', ...overrides });
  const f = authFixture([user]);
  const secureTokens = new FakeSecureTokens();
  const blocklist = new SetPasswordBlocklist();
  const accountEmails = new AccountEmails(f.oneTimeTokens, secureTokens, f.mailer, f.config);
  const linkTokens = new EmailLinkTokens(f.oneTimeTokens, secureTokens, f.userRepo);
  const tx = immediateTransaction;
  const credentials = new InMemoryMfaCredentialRepository();
  const identities = new InMemoryLinkedIdentityRepository();
  const takeover = new AccountTakeover(f.userRepo, credentials, identities, f.sessions, f.oneTimeTokens, f.audit, tx);
  const newPassword = new NewPassword(f.userRepo, f.sessions, f.oneTimeTokens, f.hasher, blocklist, accountEmails, f.audit);
  return {
    ...f,
    user,
    credentials,
    identities,
    accountEmails,
    verify: new VerifyEmailUseCase(linkTokens, f.userRepo, takeover, f.audit, tx, f.clock),
    resend: new ResendVerificationUseCase(f.userRepo, accountEmails, tx, f.clock),
    forgot: new ForgotPasswordUseCase(f.userRepo, accountEmails, tx, f.clock),
    reset: new ResetPasswordUseCase(linkTokens, f.userRepo, newPassword, takeover, f.audit, tx, f.clock),
    change: new ChangePasswordUseCase(
      f.userRepo,
      f.sessions,
      f.hasher,
      newPassword,
      f.audit,
      tx,
      f.clock,
      new RecentAuthentication(f.sessions, f.clock, f.config),
    ),
    async signIn() {
      const result = await f.login.execute({ realm: f.realm, email: user.email, password: PASSWORD, client: f.client });
      if (result.kind !== 'authenticated') throw new Error('expected a session');
      return result.sessionId;
    },
    lastMail() {
      return f.mailer.sent[f.mailer.sent.length - 1];
    },
  };
}

describe('VerifyEmailUseCase', () => {
  it('verifies the address once and records email.verified', async () => {
    const f = accountFixture();
    await f.resend.execute({ realm: f.realm, email: 'ADA@example.com ' });
    const token = tokenIn(f.lastMail().text, '/verify-email');
    await f.verify.execute({ realm: f.realm, token, ip: '198.51.100.1' });
    expect((await f.userRepo.findById('default', f.user.id))?.emailVerified).toBe(true);
    expect(f.audit.types()).toEqual(['email.verified']);
    await expect(f.verify.execute({ realm: f.realm, token, ip: '198.51.100.1' })).rejects.toMatchObject({
      code: 'INVALID_VERIFICATION_TOKEN',
    });
  });

  it('refuses a token of another realm, of another address, or past its 24 hours', async () => {
    const f = accountFixture();
    await f.resend.execute({ realm: f.realm, email: f.user.email });
    const token = tokenIn(f.lastMail().text, '/verify-email');
    const other = Realm.create({ id: 'other', name: 'Other', now: f.clock.now() }, realmDefaultsFrom(f.config));
    await expect(f.verify.execute({ realm: other, token, ip: '198.51.100.1' })).rejects.toMatchObject({
      code: 'INVALID_VERIFICATION_TOKEN',
    });

    f.clock.advance(24 * 3600);
    await expect(f.verify.execute({ realm: f.realm, token, ip: '198.51.100.1' })).rejects.toMatchObject({
      code: 'INVALID_VERIFICATION_TOKEN',
    });
    expect((await f.userRepo.findById('default', f.user.id))?.emailVerified).toBe(false);
  });

  it('notMe: takes the account over (password, sessions and profile gone), audited email.verified with takeover', async () => {
    const f = accountFixture({ profile: { firstName: 'Mallory', lastName: 'Squatter', avatar: 'https://evil.example/a.png' } });
    const sessionId = await f.signIn();
    await f.resend.execute({ realm: f.realm, email: f.user.email });
    const token = tokenIn(f.lastMail().text, '/verify-email');
    await f.verify.execute({ realm: f.realm, token, notMe: true, ip: '198.51.100.1' });
    const after = (await f.userRepo.findById('default', f.user.id))!;
    expect(after.emailVerified).toBe(true);
    expect(after.passwordHash).toBeNull();
    expect(after.profile).toEqual({ firstName: 'ada', lastName: '', avatar: null });
    expect((await f.sessions.findById('default', sessionId))?.snapshot().revokedAt).toBeInstanceOf(Date);
    const event = f.audit.entries.find((e) => e.type === 'email.verified')!;
    expect(event.details).toMatchObject({ takeover: true, removed: { password: true, sessions: 1 } });
    await expect(f.verify.execute({ realm: f.realm, token, notMe: true, ip: '198.51.100.1' })).rejects.toMatchObject({
      code: 'INVALID_VERIFICATION_TOKEN',
    });
  });

  it('notMe on an account verified meanwhile: the link is void, nothing is removed', async () => {
    const f = accountFixture();
    await f.resend.execute({ realm: f.realm, email: f.user.email });
    const token = tokenIn(f.lastMail().text, '/verify-email');
    await f.userRepo.save(User.restore({ ...f.user.snapshot(), emailVerified: true }));
    await expect(f.verify.execute({ realm: f.realm, token, notMe: true, ip: '198.51.100.1' })).rejects.toMatchObject({
      code: 'INVALID_VERIFICATION_TOKEN',
    });
    expect((await f.userRepo.findById('default', f.user.id))?.passwordHash).not.toBeNull();
  });

  it('refuses the token once the account has another address', async () => {
    const f = accountFixture();
    await f.resend.execute({ realm: f.realm, email: f.user.email });
    const token = tokenIn(f.lastMail().text, '/verify-email');
    await f.userRepo.save(User.restore({ ...f.user.snapshot(), email: 'changed@example.com' }));
    await expect(f.verify.execute({ realm: f.realm, token, ip: '198.51.100.1' })).rejects.toMatchObject({
      code: 'INVALID_VERIFICATION_TOKEN',
    });
  });
});

describe('ResendVerificationUseCase and ForgotPasswordUseCase', () => {
  it('send nothing for an unknown address, and nothing to a suspended account', async () => {
    const f = accountFixture({ status: 'suspended' });
    await f.resend.execute({ realm: f.realm, email: 'ghost@example.com' });
    await f.forgot.execute({ realm: f.realm, email: 'ghost@example.com' });
    await f.resend.execute({ realm: f.realm, email: f.user.email });
    await f.forgot.execute({ realm: f.realm, email: f.user.email });
    expect(f.mailer.sent).toHaveLength(0);
    expect(f.oneTimeTokens.rows.size).toBe(0);
  });

  it('resend sends nothing to a verified address', async () => {
    const f = accountFixture({ emailVerified: true });
    await f.resend.execute({ realm: f.realm, email: f.user.email });
    expect(f.mailer.sent).toHaveLength(0);
  });

  it('forgot stores only the hash of a 1-hour token and voids the previous reset token', async () => {
    const f = accountFixture();
    await f.forgot.execute({ realm: f.realm, email: f.user.email });
    const first = tokenIn(f.lastMail().text, '/reset-password');
    await f.forgot.execute({ realm: f.realm, email: f.user.email });
    const rows = [...f.oneTimeTokens.rows.values()];
    expect(rows).toHaveLength(2);
    expect(rows.map((r) => r.tokenHash)).not.toContain(first);
    expect(rows.filter((r) => r.usedAt === null)).toHaveLength(1);
    expect(rows[1].expiresAt.getTime() - f.clock.now().getTime()).toBe(3600 * 1000);
    await expect(f.reset.execute({ realm: f.realm, token: first, password: NEW_PASSWORD, ip: '198.51.100.1' })).rejects.toMatchObject({
      code: 'INVALID_VERIFICATION_TOKEN',
    });
  });
});

describe('ResetPasswordUseCase', () => {
  it('sets the password, revokes every session, voids pending MFA challenges and other reset links, and notifies the owner', async () => {
    const f = accountFixture();
    await f.signIn();
    await f.signIn();
    const pending = (tokenHash: string, kind: 'mfa' | 'password_reset') =>
      f.oneTimeTokens.insert({
        tokenHash,
        realmId: 'default',
        userId: f.user.id,
        kind,
        email: kind === 'mfa' ? null : f.user.email,
        payload: {},
        attempts: 0,
        createdAt: f.clock.now(),
        expiresAt: new Date(f.clock.now().getTime() + 300_000),
        usedAt: null,
      });
    await pending('pending-mfa', 'mfa');
    await f.forgot.execute({ realm: f.realm, email: f.user.email });
    await pending('other-reset-link', 'password_reset'); // a second request's link, racing the first
    const token = tokenIn(f.lastMail().text, '/reset-password');
    await f.reset.execute({ realm: f.realm, token, password: NEW_PASSWORD, ip: '198.51.100.1' });

    const user = await f.userRepo.findById('default', f.user.id);
    expect(user?.passwordHash).toBe(`hashed:${NEW_PASSWORD}`);
    expect(user?.emailVerified).toBe(true);
    expect([...f.sessions.rows.values()].every((s) => s.revokedAt !== null)).toBe(true);
    expect(f.oneTimeTokens.rows.get('pending-mfa')?.usedAt).not.toBeNull();
    expect(f.oneTimeTokens.rows.get('other-reset-link')?.usedAt).not.toBeNull();
    expect(f.lastMail().subject).toBe('Your password was changed — Default');
    expect(f.audit.types()).toEqual(expect.arrayContaining(['user.password_reset', 'email.verified']));
  });

  it.each([
    [false, { passkeys: 0, identities: 0 }],
    [true, { passkeys: 1, identities: 1 }],
  ])(
    'with the address verified before: %s — an account whose address was never proven keeps no passkey or linked identity',
    async (emailVerified, kept) => {
      const f = accountFixture({ emailVerified, mfaMethods: ['webauthn'] });
      const now = f.clock.now();
      await f.credentials.insertWebauthn(aPasskey(f.user.id, now));
      await f.identities.insert({
        id: crypto.randomUUID(),
        realmId: 'default',
        userId: f.user.id,
        providerId: crypto.randomUUID(),
        provider: 'corp',
        subject: 'linked-sub',
        email: null,
        linkedAt: now,
        lastUsedAt: null,
      });
      await f.forgot.execute({ realm: f.realm, email: f.user.email });
      await f.reset.execute({
        realm: f.realm,
        token: tokenIn(f.lastMail().text, '/reset-password'),
        password: NEW_PASSWORD,
        ip: '198.51.100.1',
      });
      expect({
        passkeys: (await f.credentials.listWebauthn(f.user.id)).length,
        identities: (await f.identities.listForUser('default', f.user.id)).length,
      }).toEqual(kept);
      const user = await f.userRepo.findById('default', f.user.id);
      expect([user?.passwordHash, user?.emailVerified]).toEqual([`hashed:${NEW_PASSWORD}`, true]);
    },
  );

  it('leaves the token usable when the new password breaks the policy', async () => {
    const f = accountFixture();
    await f.forgot.execute({ realm: f.realm, email: f.user.email });
    const token = tokenIn(f.lastMail().text, '/reset-password');
    await expect(f.reset.execute({ realm: f.realm, token, password: 'password1234', ip: '198.51.100.1' })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
    });
    await f.reset.execute({ realm: f.realm, token, password: NEW_PASSWORD, ip: '198.51.100.1' });
  });

  it('lets an invited user without a password choose one through the invitation link', async () => {
    const f = accountFixture({ passwordHash: null });
    await f.accountEmails.sendInvitation(f.realm, f.user, f.clock.now());
    expect(f.lastMail().subject).toBe('Your new account — Default');
    const token = tokenIn(f.lastMail().text, '/reset-password');
    await f.reset.execute({ realm: f.realm, token, password: NEW_PASSWORD, ip: '198.51.100.1' });
    expect((await f.userRepo.findById('default', f.user.id))?.passwordHash).toBe(`hashed:${NEW_PASSWORD}`);
  });
});

describe('ChangePasswordUseCase', () => {
  it('keeps the current session, revokes the others, voids reset links and notifies the owner', async () => {
    const f = accountFixture();
    const current = await f.signIn();
    const other = await f.signIn();
    await f.forgot.execute({ realm: f.realm, email: f.user.email });
    const resetToken = tokenIn(f.lastMail().text, '/reset-password');

    const result = await f.change.execute({
      realm: f.realm,
      userId: f.user.id,
      sessionId: current,
      currentPassword: PASSWORD,
      newPassword: NEW_PASSWORD,
      ip: '198.51.100.1',
    });
    expect(result).toEqual({ otherSessionsRevoked: 1 });
    expect(f.sessions.rows.get(current)?.revokedAt).toBeNull();
    expect(f.sessions.rows.get(other)?.revokedAt).not.toBeNull();
    expect(f.lastMail().subject).toBe('Your password was changed — Default');
    expect(f.audit.types()).toContain('password.changed');
    await expect(
      f.reset.execute({ realm: f.realm, token: resetToken, password: 'yet another passphrase', ip: '198.51.100.1' }),
    ).rejects.toMatchObject({
      code: 'INVALID_VERIFICATION_TOKEN',
    });
  });

  it('counts a wrong current password towards the lockout and locks on the limit', async () => {
    const f = accountFixture();
    const current = await f.signIn();
    for (let i = 0; i < 3; i += 1) {
      await expect(
        f.change.execute({
          realm: f.realm,
          userId: f.user.id,
          sessionId: current,
          currentPassword: 'wrong password!',
          newPassword: NEW_PASSWORD,
          ip: '198.51.100.1',
        }),
      ).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
    }
    const user = await f.userRepo.findById('default', f.user.id);
    expect(user?.statusAt(f.clock.now())).toBe('locked');
    expect(user?.passwordHash).toBe(`hashed:${PASSWORD}`);
    expect(f.audit.types()).toContain('user.locked');
  });

  it('changes nothing from a flagged session, even with the right current password, and ends no other session', async () => {
    const f = accountFixture();
    const current = await f.signIn();
    const other = await f.signIn();
    f.sessions.rows.get(current)!.flagMismatch(0.2, f.clock.now());
    await expect(
      f.change.execute({
        realm: f.realm,
        userId: f.user.id,
        sessionId: current,
        currentPassword: PASSWORD,
        newPassword: NEW_PASSWORD,
        ip: '198.51.100.1',
      }),
    ).rejects.toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining('sign in again') });
    expect((await f.userRepo.findById('default', f.user.id))?.passwordHash).toBe(`hashed:${PASSWORD}`);
    expect(f.sessions.rows.get(other)?.revokedAt).toBeNull();
    expect(f.audit.types()).not.toContain('password.changed');
  });

  it('refuses a new password equal to the current one, naming newPassword', async () => {
    const f = accountFixture();
    const current = await f.signIn();
    await expect(
      f.change.execute({
        realm: f.realm,
        userId: f.user.id,
        sessionId: current,
        currentPassword: PASSWORD,
        newPassword: PASSWORD,
        ip: '198.51.100.1',
      }),
    ).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      meta: { details: [{ field: 'newPassword', message: 'must differ from the current password' }] },
    });
  });
});
