import { DeferredWork } from '../../src/adapters/http/deferred-work';
import { PasswordlessModule } from '../../src/modules/passwordless.module';
import { adminApi, ADMIN_ENV, createRealm, createUser, superAdmin } from '../support/admin-flows';
import { codeFor, consoleReturnTo, pkcePair, requestCode, verifyCode, wrongCode } from '../support/email-codes';
import { bearer, signedInUser, uniqueEmail } from '../support/flows';
import { addSoftKey, auditEvents } from '../support/mfa';
import { addPasskey, AUTH, passkeyOptions, passkeySignIn, passkeyVerify } from '../support/passkeys';
import { listenOnLoopback } from '../support/http-client';
import { createTestApp, TestApp } from '../support/test-app';
import { alternatingPairs, TimingClient, decideTiming } from '../support/timing-client';

/**
 * Passkeys and email codes (SECURITY.md PWL-01 to PWL-05), black-box against the running service,
 * with a software authenticator that makes real ES256 signatures and can do what a real one never
 * would. test/e2e/passkeys.e2e-spec.ts and test/e2e/email-code.e2e-spec.ts hold the rest.
 */

jest.setTimeout(120_000);

describe('PWL — passkeys and email codes (SECURITY.md)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: ADMIN_ENV });
  });
  afterAll(async () => {
    await t.close();
  });

  it('PWL-01 refuses a reused challenge, no user verification, another origin, a counter gone back and a key that is not a passkey', async () => {
    const user = await signedInUser(t);
    const { authenticator } = await addPasskey(t, user.accessToken);
    const clone = authenticator.clone();
    const { challengeId, options } = await passkeyOptions(t);
    expect(Buffer.from(options.challenge, 'base64url').length).toBeGreaterThanOrEqual(16);
    expect((await passkeyVerify(t, { challengeId, response: authenticator.assertion(options) })).status).toBe(200);
    const refusals = [
      await passkeyVerify(t, { challengeId, response: authenticator.assertion(options) }),
      await passkeySignIn(t, authenticator, { userVerified: false }),
      await passkeySignIn(t, authenticator, { origin: 'https://evil.test' }),
      await passkeySignIn(t, clone),
    ];
    const plain = await signedInUser(t);
    const { authenticator: securityKey } = await addSoftKey(t, plain.accessToken, 'Not a passkey');
    securityKey.resident = true;
    refusals.push(await passkeySignIn(t, securityKey));
    const late = await passkeyOptions(t);
    t.clock.advance(301);
    refusals.push(await passkeyVerify(t, { challengeId: late.challengeId, response: authenticator.assertion(late.options) }));
    expect(refusals.map((r) => [r.status, r.body.error?.code])).toEqual(Array(6).fill([401, 'INVALID_CREDENTIALS']));
    const reasons = (await auditEvents(t, user.id, 'login.failed')).map((e) => e.details.reason);
    expect(reasons).toEqual(expect.arrayContaining(['user_verification', 'origin', 'counter_regression']));
  });

  it('PWL-02 kills a code at the 5th wrong try (in parallel), keeps only a keyed hash, and a sixth try with the right code fails', async () => {
    const user = await signedInUser(t);
    const mail = await codeFor(t, user.email);
    const wrong = await Promise.all(
      Array.from({ length: 5 }, (_, i) => verifyCode(t, { email: user.email, code: wrongCode(mail.code, i + 1) })),
    );
    expect(wrong.map((r) => r.status)).toEqual([401, 401, 401, 401, 401]);
    const sixth = await verifyCode(t, { email: user.email, code: mail.code });
    expect([sixth.status, sixth.body.error.code]).toEqual([401, 'INVALID_CREDENTIALS']);
    const stored: { payload: unknown; attempts: number; used_at: Date | null }[] = await t.dataSource.query(
      `SELECT payload, attempts, used_at FROM one_time_tokens WHERE kind = 'email_code' AND email = $1`,
      [user.email],
    );
    expect(stored).toHaveLength(1);
    expect(stored[0].attempts).toBe(5);
    expect(stored[0].used_at).not.toBeNull();
    expect(JSON.stringify(stored)).not.toContain(mail.code);
    // Per-address limit: 3 requests per 15 minutes, the default (the test app raises it; set back here).
    const limited = await createTestApp({ env: { RATE_LIMIT_EMAIL_CODE: '3/900' } });
    try {
      const email = uniqueEmail('limited');
      const answers = [];
      for (let i = 0; i < 4; i += 1)
        answers.push((await requestCode(limited, { email: i % 2 ? email.toUpperCase() : ` ${email}` })).status);
      expect(answers).toEqual([202, 202, 202, 429]);
      expect((await requestCode(limited, { email: uniqueEmail('other') })).status).toBe(202);
    } finally {
      await limited.close();
    }
  });

  it('PWL-03 answers /email-code alike for known and unknown addresses, in about the same time', async () => {
    const root = await superAdmin(t);
    // Registration closed: an unknown address gets no email at all, the most different case.
    const realm = `timing-${Date.now().toString(36)}`;
    await createRealm(t, root.accessToken, realm);
    await adminApi(t, root.accessToken, realm)
      .patch('/realm')
      .send({ settings: { registration: 'closed' } });
    const member = await createUser(t, root.accessToken, realm, { emailVerified: true });
    const deferred = t.app.select(PasswordlessModule).get(DeferredWork);
    // Timed from another process, as a remote client sees it: the sending that follows the answer
    // must not slow the client's reading of it, which it would if both shared one event loop.
    const client = new TimingClient(await listenOnLoopback(t));
    const request = (email: string) => ({
      method: 'POST',
      path: '/api/v1/auth/email-code',
      headers: { 'X-Realm-Id': realm },
      body: { email },
    });
    // One unknown address throughout, as the known one: both sides update the same per-address limit.
    const ghost = uniqueEmail('ghost');
    let result;
    try {
      // The two of a pair back to back: the second meets what the service still does for the
      // first (on the embedded database, on its only thread); between pairs that work is let finish.
      result = await decideTiming(async () => {
        const timings = await alternatingPairs(
          client,
          { known: request(member.email), unknown: request(ghost) },
          { pairs: 100, settle: () => deferred.settled() },
        );
        for (const res of [...timings.known, ...timings.unknown]) expect([res.status, res.body]).toEqual([202, { success: true }]);
        return timings;
      });
    } finally {
      client.close();
    }
    // Sending before answering puts the lookup, the token and the outbox writes on the known
    // side; sending after answering but doing less for an unknown address leaves the request that
    // follows a known one slower. Either moves the gap by milliseconds.
    expect(result).toEqual({ ...result, within: true });
  });

  it('PWL-04 redeems a link only by POST with the verifier of the browser that asked; a fetch spends nothing; a wrong verifier spends the link, not the code', async () => {
    const user = await signedInUser(t);
    const pkce = pkcePair();
    const mail = await codeFor(t, user.email, { link: pkce });
    const link = new URL(mail.link!);
    expect(link.origin + link.pathname).toBe(consoleReturnTo(t));
    await t.api().get(link.pathname + link.search);
    await t.api().head(link.pathname + link.search);
    const wrongVerifier = await verifyCode(t, { token: mail.token, codeVerifier: pkcePair().codeVerifier });
    expect(wrongVerifier.status).toBe(401);
    expect((await verifyCode(t, { token: mail.token, codeVerifier: pkce.codeVerifier })).status).toBe(401);
    expect((await verifyCode(t, { email: user.email, code: mail.code })).status).toBe(200);
    const fresh = pkcePair();
    const again = await codeFor(t, user.email, { link: fresh });
    await t.api().get(new URL(again.link!).pathname + new URL(again.link!).search);
    const signedIn = await verifyCode(t, { token: again.token, codeVerifier: fresh.codeVerifier });
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.tokens.accessToken).toEqual(expect.any(String));
    expect((await verifyCode(t, { token: again.token, codeVerifier: fresh.codeVerifier })).status).toBe(401);
  });

  it('PWL-05 never leaves a password-less account without a way in, and confirms removals with a recent sign-in', async () => {
    const email = uniqueEmail('nopass');
    const mail = await codeFor(t, email);
    const signedIn = await verifyCode(t, { email, code: mail.code });
    const token = signedIn.body.tokens.accessToken as string;
    const first = await addPasskey(t, token);
    const second = await addPasskey(t, token);
    const remove = (id: string, body: Record<string, unknown> = {}) =>
      t
        .api()
        .delete(`${AUTH}/mfa/webauthn/${id}`)
        .set(...bearer(token))
        .send(body);
    expect((await remove(first.body.credential.id)).status).toBe(200);
    const last = await remove(second.body.credential.id);
    expect([last.status, last.body.error.code]).toEqual([409, 'INVALID_USER_STATE']);
    t.clock.advance(601);
    const stale = await remove(second.body.credential.id);
    expect([stale.status, stale.body.error.code]).toEqual([403, 'FORBIDDEN']);
    // A first password needs no current one; a second change does.
    const fresh = await passkeySignIn(t, second.authenticator);
    const freshToken = fresh.body.tokens.accessToken as string;
    const change = (body: Record<string, unknown>) =>
      t
        .api()
        .post(`${AUTH}/password/change`)
        .set(...bearer(freshToken))
        .send(body);
    expect((await change({ newPassword: 'a first password for this account' })).status).toBe(200);
    const again = await change({ newPassword: 'another password entirely' });
    expect([again.status, again.body.error.details[0].field]).toEqual([400, 'currentPassword']);
  });
});
