import { EmailCodeSignInUseCase } from '../../../src/application/auth/email-code-sign-in.use-case';
import { RequestEmailCodeUseCase } from '../../../src/application/auth/request-email-code.use-case';
import { User, UserState } from '../../../src/domain/user/user';
import { aUser } from '../../builders/user.builder';
import { aPasskey } from '../../builders/webauthn-credential.builder';
import { useCaseFixture } from './fixture';

const EMAIL = 'ada@example.com';
const VERIFIER = 'v'.repeat(43);

function emailCodes(users: User[] = [], options: { registration?: 'open' | 'closed' } = {}) {
  const f = useCaseFixture({ users, mfaFromFactors: true });
  if (options.registration) f.realm.update({ settings: { registration: options.registration } }, f.clock.now());
  const request = f.build(RequestEmailCodeUseCase);
  const signIn = f.build(EmailCodeSignInUseCase);
  /** Requests a code (and a link, with a return URL) and returns what the email holds. */
  async function sent(email = EMAIL, withLink = false): Promise<{ code: string; token: string | null } | null> {
    const before = f.mailer.sent.length;
    const accepted = request.execute({
      realm: f.realm,
      email,
      ...(withLink ? { returnTo: `${f.config.apiUrl}/account/`, codeChallenge: f.secureTokens.pkceChallenge(VERIFIER) } : {}),
    });
    await accepted.send();
    if (f.mailer.sent.length === before) return null;
    const text = f.lastMail().text;
    const code = /\b(\d{4})[ -]?(\d{4})\b/.exec(text);
    if (!code) throw new Error(`no code in ${text}`);
    return { code: code[1] + code[2], token: /email_token=([A-Za-z0-9_-]+)/.exec(text)?.[1] ?? null };
  }
  const byCode = (code: string, email = EMAIL) => signIn.execute({ realm: f.realm, proof: { email, code }, client: f.client });
  const byLink = (token: string, codeVerifier = VERIFIER) =>
    signIn.execute({ realm: f.realm, proof: { token, codeVerifier }, client: f.client });
  const refusals = () => f.audit.entries.filter((e) => e.type === 'login.failed').map((e) => e.details?.reason);
  return { ...f, request, signIn, sent, byCode, byLink, refusals };
}

function ada(overrides: Partial<UserState> = {}): User {
  return aUser({ email: EMAIL, emailVerified: true, ...overrides });
}

describe('RequestEmailCodeUseCase', () => {
  it('checks the request before any work: a malformed address, a return URL without its challenge, a foreign return URL', () => {
    const f = emailCodes();
    expect(() => f.request.execute({ realm: f.realm, email: 'not an address' })).toThrow(
      expect.objectContaining({ code: 'VALIDATION_FAILED' }),
    );
    expect(() => f.request.execute({ realm: f.realm, email: EMAIL, returnTo: `${f.config.apiUrl}/account/` })).toThrow(
      expect.objectContaining({ meta: { details: [expect.objectContaining({ field: 'codeChallenge' })] } }),
    );
    expect(() =>
      f.request.execute({
        realm: f.realm,
        email: EMAIL,
        returnTo: 'https://evil.example.net/',
        codeChallenge: f.secureTokens.pkceChallenge(VERIFIER),
      }),
    ).toThrow(expect.objectContaining({ meta: { details: [expect.objectContaining({ field: 'returnTo' })] } }));
    expect(() => f.request.execute({ realm: f.realm, email: EMAIL, returnTo: `${f.config.apiUrl}/account/`, codeChallenge: 'x' })).toThrow(
      expect.objectContaining({ meta: { details: [expect.objectContaining({ field: 'codeChallenge' })] } }),
    );
    expect(f.oneTimeTokens.rows.size).toBe(0);
  });

  it("emails a code valid 10 minutes, kept only as a keyed hash, and voids the address's older code", async () => {
    const user = ada();
    const f = emailCodes([user]);
    const first = await f.sent();
    const second = await f.sent();
    expect(f.lastMail().to).toBe(EMAIL);
    const rows = [...f.oneTimeTokens.rows.values()];
    expect(rows).toHaveLength(2);
    const newest = rows[1];
    expect(newest).toMatchObject({ kind: 'email_code', email: EMAIL, userId: user.id, usedAt: null });
    expect(newest.expiresAt.getTime() - f.clock.now().getTime()).toBe(600_000);
    expect(JSON.stringify(newest.payload)).not.toContain(second!.code);
    expect(rows[0].usedAt).not.toBeNull();
    await expect(f.byCode(first!.code)).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
  });

  it('sends nothing, and stores nothing, to an address without an account where registration is closed', async () => {
    // The same statements run for every address (timing); the database rolls them back where nothing is sent.
    const f = emailCodes([], { registration: 'closed' });
    await f.request.execute({ realm: f.realm, email: 'nobody@example.com' }).send();
    expect([f.tx.committed, f.tx.rolledBack]).toEqual([0, 1]);
    const g = emailCodes([]);
    expect(await g.sent('nobody@example.com')).not.toBeNull();
    expect([g.tx.committed, g.tx.rolledBack]).toEqual([1, 0]);
    expect([...g.oneTimeTokens.rows.values()][0].userId).toBeNull();
    const h = emailCodes([ada()], { registration: 'closed' });
    expect(await h.sent()).not.toBeNull();
    expect(h.tx.rolledBack).toBe(0);
  });
});

describe('EmailCodeSignInUseCase', () => {
  it('signs a verified account in with its code, amr email, and spends the code', async () => {
    const user = ada();
    const f = emailCodes([user]);
    const { code } = (await f.sent())!;
    const outcome = await f.byCode(code.slice(0, 4) + '-' + code.slice(4), ' ADA@example.com ');
    expect(outcome).toMatchObject({ kind: 'authenticated', user: { id: user.id } });
    if (outcome.kind !== 'authenticated') return;
    expect((await f.sessions.findById('default', outcome.sessionId))?.amr).toEqual(['email']);
    await expect(f.byCode(code)).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
    expect(f.refusals()).toEqual(['expired_or_used']);
  });

  it('kills the code on the fifth wrong try, so even the right code fails after it', async () => {
    const f = emailCodes([ada()]);
    const { code } = (await f.sent())!;
    const wrong = code === '00000000' ? '11111111' : '00000000';
    for (let i = 0; i < 5; i++) await expect(f.byCode(wrong)).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
    await expect(f.byCode(code)).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
    expect(f.refusals()).toEqual(['wrong_code', 'wrong_code', 'wrong_code', 'wrong_code', 'wrong_code_last_try', 'expired_or_used']);
  });

  it('refuses an address without a code, and a code past its 10 minutes, alike', async () => {
    const f = emailCodes([ada()]);
    await expect(f.byCode('12345678', 'nobody@example.com')).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
    const { code } = (await f.sent())!;
    f.clock.advance(601);
    await expect(f.byCode(code)).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
    expect(f.refusals()).toEqual(['no_code', 'expired_or_used']);
  });

  it('signs in with the link and the verifier of the request; a wrong verifier spends the link but not the code', async () => {
    const user = ada();
    const f = emailCodes([user]);
    const first = (await f.sent(EMAIL, true))!;
    expect(first.token).not.toBeNull();
    await expect(f.byLink(first.token!, 'w'.repeat(43))).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
    await expect(f.byLink(first.token!)).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
    expect(await f.byCode(first.code)).toMatchObject({ kind: 'authenticated' });
    const second = (await f.sent(EMAIL, true))!;
    expect(await f.byLink(second.token!)).toMatchObject({ kind: 'authenticated', user: { id: user.id } });
    const codeOnly = (await f.sent())!;
    const row = [...f.oneTimeTokens.rows.values()].at(-1)!;
    expect(row.payload.codeChallenge).toBeUndefined();
    await expect(f.byLink('unknown-token')).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
    expect(codeOnly.token).toBeNull();
    expect(f.refusals()).toEqual(['wrong_verifier', 'link_spent_or_expired', 'unknown_link']);
  });

  it('takes an unverified account over: its password, factors and sessions go, the address is verified', async () => {
    const squatted = ada({ emailVerified: false });
    const f = emailCodes([squatted]);
    await f.mfaCredentials.insertWebauthn(aPasskey(squatted.id, f.clock.now()));
    const squattersSession = await f.signedIn(squatted.id);
    const { code } = (await f.sent())!;
    const outcome = await f.byCode(code);
    expect(outcome.kind).toBe('authenticated');
    const owner = (await f.users.findById('default', squatted.id))!;
    expect([owner.emailVerified, owner.hasPassword, owner.mfaMethods]).toEqual([true, false, []]);
    expect(await f.sessions.isLive('default', squattersSession, f.clock.now(), f.realm.policy.sessionLifetime)).toBe(false);
    expect(f.audit.entries.find((e) => e.type === 'email.verified')?.details).toMatchObject({ method: 'email-code', takeover: true });
  });

  it("never claims an unverified administrator's account", async () => {
    const adminUser = ada({ emailVerified: false, roles: ['realm-admin'] });
    const f = emailCodes([adminUser]);
    const { code } = (await f.sent())!;
    await expect(f.byCode(code)).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
    expect((await f.users.findById('default', adminUser.id))?.hasPassword).toBe(true);
    expect(f.refusals()).toEqual(['no_account']);
  });

  it('registers a verified, passwordless account for a new address where registration is open', async () => {
    const f = emailCodes([]);
    const { code } = (await f.sent('grace@example.com'))!;
    const outcome = await f.byCode(code, 'grace@example.com');
    expect(outcome).toMatchObject({ kind: 'authenticated' });
    const grace = (await f.users.findByEmail('default', 'grace@example.com'))!;
    expect([grace.emailVerified, grace.hasPassword, grace.profile.firstName]).toEqual([true, false, 'grace']);
    expect(f.audit.entries.find((e) => e.type === 'user.registered')?.details).toEqual({ method: 'email-code' });
  });

  it('asks a user with a second factor for it', async () => {
    const user = ada();
    const f = emailCodes([user]);
    await f.mfaCredentials.insertWebauthn(aPasskey(user.id, f.clock.now(), { passkey: false }));
    const { code } = (await f.sent())!;
    expect(await f.byCode(code)).toMatchObject({ kind: 'mfa-required', methods: ['webauthn'] });
  });
});
