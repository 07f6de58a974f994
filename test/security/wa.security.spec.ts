import { randomBytes } from 'node:crypto';
import { bearer, login, PASSWORD, register, signedInUser, uniqueEmail } from '../support/flows';
import { addPasskey, passkeyOptions, passkeySignIn, passkeyVerify } from '../support/passkeys';
import { addSoftKey, auditEvents, mfaToken, userWithSoftKey, verify, webauthnAnswer } from '../support/mfa';
import { SoftAuthenticator } from '../support/soft-authenticator';
import { createTestApp, TestApp } from '../support/test-app';

/**
 * WebAuthn relying-party checks at the API, with a software authenticator that can do what a real
 * one never would (tamper with origin, RP id, flags, counter). The real-browser ceremony (WA-01)
 * is test/browser/webauthn.browser-spec.ts (Chromium with a CDP virtual authenticator).
 *
 * Status codes follow the contract: a refused registration is 400 VALIDATION_FAILED; a refused
 * assertion at /mfa/verify is a wrong second factor, 401 INVALID_MFA_CODE (SECURITY.md says 400).
 */

const MFA = '/api/v1/auth/mfa';

function registrationOptions(t: TestApp, accessToken: string, body: Record<string, unknown> = {}) {
  return t
    .api()
    .post(`${MFA}/webauthn/register/options`)
    .set(...bearer(accessToken))
    .send(body);
}

function registrationVerify(t: TestApp, accessToken: string, response: unknown) {
  return t
    .api()
    .post(`${MFA}/webauthn/register/verify`)
    .set(...bearer(accessToken))
    .send({ response });
}

function expectRefusedAssertion(res: { status: number; body: { error?: { code: string } } }) {
  expect([res.status, res.body.error?.code]).toEqual([401, 'INVALID_MFA_CODE']);
}

function expectRefusedPasskey(res: { status: number; body: { error?: { code: string } } }) {
  expect([res.status, res.body.error?.code]).toEqual([401, 'INVALID_CREDENTIALS']);
}

function expectRefusedRegistration(res: { status: number; body: { error?: { code: string } } }) {
  expect([res.status, res.body.error?.code]).toEqual([400, 'VALIDATION_FAILED']);
}

async function outboxNotices(t: TestApp, email: string): Promise<string[]> {
  const rows: { text_body: string }[] = await t.dataSource.query(
    `SELECT text_body FROM email_outbox WHERE recipient = $1 AND subject LIKE 'Security notice%' ORDER BY created_at`,
    [email],
  );
  return rows.map((r) => r.text_body);
}

describe('WA — WebAuthn relying-party checks (SECURITY.md)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t?.close());

  /**
   * After a race of regressed and higher counters: the credential is disabled, the regression is
   * recorded and mailed once, and the stored counter is the highest of the accepted assertions
   * (accepted ones only move it forward, and a disabled credential records no use).
   */
  async function expectDisabledOnce(email: string, credentialId: string, storedBefore: number, accepted: number[]) {
    const [row]: { counter: string; disabled_at: Date | null }[] = await t.dataSource.query(
      `SELECT counter, disabled_at FROM webauthn_credentials WHERE id = $1`,
      [credentialId],
    );
    expect(row.disabled_at).not.toBeNull();
    expect(Number(row.counter)).toBe(Math.max(storedBefore, ...accepted));
    const notices = (await outboxNotices(t, email)).filter((n) => n.includes('signature counter went backwards'));
    expect(notices).toHaveLength(1);
    const events: { details: Record<string, unknown> }[] = await t.dataSource.query(
      `SELECT details FROM audit_events WHERE type IN ('login.failed', 'mfa.failed') AND details->>'credentialId' = $1`,
      [credentialId],
    );
    expect(events.filter((e) => e.details.reason === 'counter_regression')).toHaveLength(1);
  }

  it('WA-02 challenges are ≥16 random bytes, new per ceremony, single use, expire with the ceremony and stay with their user', async () => {
    const alice = await userWithSoftKey(t);
    const bob = await signedInUser(t);
    // Registration: fresh ≥16-byte challenges.
    const a = await registrationOptions(t, alice.accessToken);
    const b = await registrationOptions(t, alice.accessToken);
    expect(Buffer.from(a.body.challenge, 'base64url').length).toBeGreaterThanOrEqual(16);
    expect(b.body.challenge).not.toBe(a.body.challenge);
    // Authentication: fresh challenges too.
    const token = await mfaToken(t, alice.email);
    const first = await t.api().post(`${MFA}/webauthn/options`).send({ mfaToken: token });
    const second = await t.api().post(`${MFA}/webauthn/options`).send({ mfaToken: token });
    expect(Buffer.from(first.body.challenge, 'base64url').length).toBeGreaterThanOrEqual(16);
    expect(second.body.challenge).not.toBe(first.body.challenge);

    // A captured assertion replayed in a later login is refused.
    const { assertion } = await webauthnAnswer(t, token, alice.authenticator);
    expect((await verify(t, { mfaToken: token, type: 'webauthn', code: JSON.stringify(assertion) })).status).toBe(200);
    const later = await mfaToken(t, alice.email);
    await t.api().post(`${MFA}/webauthn/options`).send({ mfaToken: later }).expect(200);
    expectRefusedAssertion(await verify(t, { mfaToken: later, type: 'webauthn', code: JSON.stringify(assertion) }));
    // A registration answered after the ceremony timeout (300 s) is refused.
    const stale = await registrationOptions(t, bob.accessToken);
    t.clock.advance(301);
    expectRefusedRegistration(await registrationVerify(t, bob.accessToken, new SoftAuthenticator().attestation(stale.body)));
    // So is an authentication: the mfaToken carrying the challenge has expired with it.
    const slow = await mfaToken(t, alice.email);
    const { assertion: late } = await webauthnAnswer(t, slow, alice.authenticator);
    t.clock.advance(301);
    const expired = await verify(t, { mfaToken: slow, type: 'webauthn', code: JSON.stringify(late) });
    expect([expired.status, expired.body.error.code]).toEqual([401, 'TOKEN_EXPIRED']);
    // A challenge is bound to the user who asked for it: one user's options answered in another's registration fail.
    const owner = await signedInUser(t);
    const other = await signedInUser(t);
    const firstsOptions = await registrationOptions(t, owner.accessToken);
    expectRefusedRegistration(await registrationVerify(t, other.accessToken, new SoftAuthenticator().attestation(firstsOptions.body)));
    // …and in another user's login.
    const carol = await userWithSoftKey(t);
    const carolsLogin = await mfaToken(t, carol.email);
    const alicesLogin = await mfaToken(t, alice.email);
    const alicesChallenge = (await t.api().post(`${MFA}/webauthn/options`).send({ mfaToken: alicesLogin })).body;
    await t.api().post(`${MFA}/webauthn/options`).send({ mfaToken: carolsLogin }).expect(200);
    const crossed = carol.authenticator.assertion(alicesChallenge);
    expectRefusedAssertion(await verify(t, { mfaToken: carolsLogin, type: 'webauthn', code: JSON.stringify(crossed) }));
  });

  it('WA-03 checks clientData type and origin, rpIdHash and user presence; the untampered control passes', async () => {
    const user = await userWithSoftKey(t);
    const tampers: Parameters<SoftAuthenticator['assertion']>[1][] = [
      { origin: 'http://localhost:3001' }, // same RP id, another port
      { origin: 'https://evil.test' },
      { rpId: 'evil.test' },
      { userPresent: false },
      { type: 'webauthn.create' },
    ];
    for (const tamper of tampers) {
      const token = await mfaToken(t, user.email);
      const { assertion } = await webauthnAnswer(t, token, user.authenticator, tamper);
      expectRefusedAssertion(await verify(t, { mfaToken: token, type: 'webauthn', code: JSON.stringify(assertion) }));
    }
    const reasons = (await auditEvents(t, user.id, 'mfa.failed')).map((e) => e.details.reason);
    expect(reasons).toEqual(['origin', 'origin', 'rp_id', expect.any(String), 'type']);
    const control = await mfaToken(t, user.email);
    const { assertion } = await webauthnAnswer(t, control, user.authenticator);
    expect((await verify(t, { mfaToken: control, type: 'webauthn', code: JSON.stringify(assertion) })).status).toBe(200);

    // The same checks at registration.
    const fresh = await signedInUser(t);
    for (const tamper of [{ origin: 'http://localhost:3001' }, { rpId: 'evil.test' }, { type: 'webauthn.get' }]) {
      const options = await registrationOptions(t, fresh.accessToken);
      expectRefusedRegistration(await registrationVerify(t, fresh.accessToken, new SoftAuthenticator().attestation(options.body, tamper)));
    }
  });

  it('WA-04 requires user verification in both ceremonies: an authenticator without UV is refused', async () => {
    const user = await userWithSoftKey(t);
    const token = await mfaToken(t, user.email);
    const { options, assertion } = await webauthnAnswer(t, token, user.authenticator, { userVerified: false });
    expect(options.userVerification).toBe('required');
    expectRefusedAssertion(await verify(t, { mfaToken: token, type: 'webauthn', code: JSON.stringify(assertion) }));

    const fresh = await signedInUser(t);
    const creation = await registrationOptions(t, fresh.accessToken);
    expect(creation.body.authenticatorSelection.userVerification).toBe('required');
    expectRefusedRegistration(
      await registrationVerify(t, fresh.accessToken, new SoftAuthenticator().attestation(creation.body, { userVerified: false })),
    );
  });

  it('WA-05 a signature counter that does not increase (a cloned key) is refused and disables the key as a second factor: the clone with a higher counter and the genuine key are refused too, the owner is mailed once; removed and registered again it works', async () => {
    const user = await userWithSoftKey(t);
    const spare = await addSoftKey(t, user.accessToken, 'Spare key');
    const clone = user.authenticator.clone();
    for (let i = 0; i < 2; i++) {
      const token = await mfaToken(t, user.email);
      const { assertion } = await webauthnAnswer(t, token, user.authenticator);
      expect((await verify(t, { mfaToken: token, type: 'webauthn', code: JSON.stringify(assertion) })).status).toBe(200);
    }
    const token = await mfaToken(t, user.email);
    const { assertion } = await webauthnAnswer(t, token, clone);
    expectRefusedAssertion(await verify(t, { mfaToken: token, type: 'webauthn', code: JSON.stringify(assertion) }));
    const [failed] = await auditEvents(t, user.id, 'mfa.failed');
    expect(failed.details).toMatchObject({
      reason: 'counter_regression',
      credentialId: user.credentialId,
      storedCounter: 2,
      receivedCounter: 1,
      credentialDisabled: true,
    });

    // The key is disabled: the clone with a higher counter is refused, and so is the genuine key.
    const tries: [SoftAuthenticator, Parameters<SoftAuthenticator['assertion']>[1]][] = [
      [clone, { counter: 1000 }],
      [clone, { counter: 0xffffffff }],
      [user.authenticator, {}],
    ];
    for (const [authenticator, tamper] of tries) {
      const next = await mfaToken(t, user.email);
      const { options, assertion: answer } = await webauthnAnswer(t, next, authenticator, tamper);
      expectRefusedAssertion(await verify(t, { mfaToken: next, type: 'webauthn', code: JSON.stringify(answer) }));
      // It is not offered any more; the spare key is.
      expect(options.allowCredentials.map((c: { id: string }) => c.id)).toEqual([spare.authenticator.id]);
    }
    const reasons = (await auditEvents(t, user.id, 'mfa.failed')).map((e) => e.details.reason);
    expect(reasons).toEqual(['counter_regression', 'credential_disabled', 'credential_disabled', 'credential_disabled']);
    const stored: { counter: string; disabled_reason: string }[] = await t.dataSource.query(
      `SELECT counter, disabled_reason FROM webauthn_credentials WHERE id = $1`,
      [user.credentialId],
    );
    expect(stored).toEqual([{ counter: '2', disabled_reason: 'counter_regression' }]);
    const notices = (await outboxNotices(t, user.email)).filter((n) => n.includes('signature counter went backwards'));
    expect(notices).toHaveLength(1);
    expect(notices[0]).toContain('is now disabled');

    // The other factors still work.
    const withSpare = await mfaToken(t, user.email);
    const { assertion: good } = await webauthnAnswer(t, withSpare, spare.authenticator);
    const signedIn = await verify(t, { mfaToken: withSpare, type: 'webauthn', code: JSON.stringify(good) });
    expect(signedIn.status).toBe(200);
    const withCode = await mfaToken(t, user.email);
    expect((await verify(t, { mfaToken: withCode, type: 'recovery', code: user.recoveryCodes[0] })).status).toBe(200);

    // The owner sees it disabled (GET /mfa), the spare key not.
    const accessToken = signedIn.body.tokens.accessToken as string;
    const status = await t
      .api()
      .get(MFA)
      .set(...bearer(accessToken));
    const disabled = Object.fromEntries(status.body.webauthnCredentials.map((c: { id: string; disabled: boolean }) => [c.id, c.disabled]));
    expect(disabled).toEqual({ [user.credentialId]: true, [spare.authenticator.id]: false });

    // Until the owner removes it; the genuine key registered again works.
    await t
      .api()
      .delete(`${MFA}/webauthn/${encodeURIComponent(user.credentialId)}`)
      .set(...bearer(accessToken))
      .send({ password: PASSWORD })
      .expect(200);
    await addSoftKey(t, accessToken, 'Test key again', user.authenticator);
    const again = await mfaToken(t, user.email);
    const { assertion: genuine } = await webauthnAnswer(t, again, user.authenticator);
    expect((await verify(t, { mfaToken: again, type: 'webauthn', code: JSON.stringify(genuine) })).status).toBe(200);
  });

  it('WA-05 a cloned key that is its only second factor is disabled too: no key is offered, recovery codes still sign in', async () => {
    const user = await userWithSoftKey(t);
    const clone = user.authenticator.clone();
    const first = await mfaToken(t, user.email);
    const { assertion } = await webauthnAnswer(t, first, user.authenticator);
    expect((await verify(t, { mfaToken: first, type: 'webauthn', code: JSON.stringify(assertion) })).status).toBe(200);
    const token = await mfaToken(t, user.email);
    const { assertion: regressed } = await webauthnAnswer(t, token, clone, { counter: 1 });
    expectRefusedAssertion(await verify(t, { mfaToken: token, type: 'webauthn', code: JSON.stringify(regressed) }));

    // MFA stays on (the key is not removed): the login still asks for a second factor, no key is offered.
    const next = await mfaToken(t, user.email);
    const options = await t.api().post(`${MFA}/webauthn/options`).send({ mfaToken: next });
    expect([options.status, options.body.error?.code]).toEqual([400, 'VALIDATION_FAILED']);
    expectRefusedAssertion(
      await verify(t, {
        mfaToken: next,
        type: 'webauthn',
        code: JSON.stringify(clone.assertion({ challenge: 'AAAA' }, { counter: 1000 })),
      }),
    );
    const status = await t
      .api()
      .get(MFA)
      .set(...bearer(user.accessToken));
    expect(status.body).toMatchObject({ enabled: true, methods: ['webauthn'] });
    expect((await verify(t, { mfaToken: next, type: 'recovery', code: user.recoveryCodes[0] })).status).toBe(200);
  });

  it('WA-05 at a passkey sign-in: the regressed clone is refused and disables the passkey; the clone with a higher counter and the genuine passkey are refused as an unknown one', async () => {
    const user = await signedInUser(t);
    const { authenticator, body } = await addPasskey(t, user.accessToken);
    const credentialId = body.credential.id as string;
    const clone = authenticator.clone();
    expect((await passkeySignIn(t, authenticator)).status).toBe(200);
    expect((await passkeySignIn(t, authenticator)).status).toBe(200);
    expectRefusedPasskey(await passkeySignIn(t, clone));
    expectRefusedPasskey(await passkeySignIn(t, clone, { counter: 1000 }));
    expectRefusedPasskey(await passkeySignIn(t, clone, { counter: 0xffffffff }));
    expectRefusedPasskey(await passkeySignIn(t, authenticator));
    const failures = (await auditEvents(t, user.id, 'login.failed')).map((e) => e.details);
    expect(failures).toEqual([
      expect.objectContaining({
        reason: 'counter_regression',
        credentialId,
        storedCounter: 2,
        receivedCounter: 1,
        credentialDisabled: true,
      }),
      expect.objectContaining({ reason: 'credential_disabled', credentialId }),
      expect.objectContaining({ reason: 'credential_disabled', credentialId }),
      expect.objectContaining({ reason: 'credential_disabled', credentialId }),
    ]);
    const notices = (await outboxNotices(t, user.email)).filter((n) => n.includes('signature counter went backwards'));
    expect(notices).toHaveLength(1);
    expect(notices[0]).toContain('passkey');

    // Removed by its owner, the genuine passkey registered again signs in.
    await t
      .api()
      .delete(`${MFA}/webauthn/${encodeURIComponent(credentialId)}`)
      .set(...bearer(user.accessToken))
      .send({ password: PASSWORD })
      .expect(200);
    await addPasskey(t, user.accessToken, authenticator);
    expect((await passkeySignIn(t, authenticator)).status).toBe(200);
  });

  it('WA-05 of concurrent assertions with regressed and higher counters none is accepted after the regression, and the owner is mailed once (passkey and second factor)', async () => {
    for (let round = 0; round < 3; round++) {
      // Passkey sign-in.
      const owner = await signedInUser(t);
      const { authenticator, body } = await addPasskey(t, owner.accessToken);
      const clone = authenticator.clone();
      expect((await passkeySignIn(t, authenticator)).status).toBe(200);
      expect((await passkeySignIn(t, authenticator)).status).toBe(200);
      const counters = [1, 1000, 1, 5000, undefined];
      const challenges = await Promise.all(counters.map(() => passkeyOptions(t)));
      const answers = await Promise.all(
        counters.map((counter, i) =>
          passkeyVerify(t, {
            challengeId: challenges[i].challengeId,
            response:
              counter === undefined ? authenticator.assertion(challenges[i].options) : clone.assertion(challenges[i].options, { counter }),
          }),
        ),
      );
      expect(answers.every((r) => r.status === 200 || r.status === 401)).toBe(true);
      const acceptedPasskeys = answers.flatMap((r, i) => (r.status === 200 ? [counters[i] ?? authenticator.counter] : []));
      await expectDisabledOnce(owner.email, body.credential.id as string, 2, acceptedPasskeys);
      expectRefusedPasskey(await passkeySignIn(t, clone, { counter: 0xfffffff0 }));
      expectRefusedPasskey(await passkeySignIn(t, authenticator));

      // Second factor.
      const user = await userWithSoftKey(t);
      const spare = await addSoftKey(t, user.accessToken, 'Spare key');
      const keyClone = user.authenticator.clone();
      const first = await mfaToken(t, user.email);
      const { assertion } = await webauthnAnswer(t, first, user.authenticator);
      expect((await verify(t, { mfaToken: first, type: 'webauthn', code: JSON.stringify(assertion) })).status).toBe(200);
      const tokens = [];
      for (const counter of counters) {
        const token = await mfaToken(t, user.email);
        const { assertion: answer } = await webauthnAnswer(t, token, counter === undefined ? user.authenticator : keyClone, {
          counter: counter === undefined ? undefined : counter,
        });
        tokens.push({ token, answer });
      }
      const results = await Promise.all(
        tokens.map(({ token, answer }) => verify(t, { mfaToken: token, type: 'webauthn', code: JSON.stringify(answer) })),
      );
      expect(results.every((r) => r.status === 200 || r.status === 401)).toBe(true);
      const acceptedKeys = results.flatMap((r, i) => (r.status === 200 ? [counters[i] ?? user.authenticator.counter] : []));
      await expectDisabledOnce(user.email, user.credentialId, 1, acceptedKeys);
      for (const [authenticator2, tamper] of [
        [keyClone, { counter: 0xfffffff0 }],
        [user.authenticator, {}],
      ] as const) {
        const token = await mfaToken(t, user.email);
        const { assertion: late } = await webauthnAnswer(t, token, authenticator2, tamper);
        expectRefusedAssertion(await verify(t, { mfaToken: token, type: 'webauthn', code: JSON.stringify(late) }));
      }
      const control = await mfaToken(t, user.email);
      const { assertion: good } = await webauthnAnswer(t, control, spare.authenticator);
      expect((await verify(t, { mfaToken: control, type: 'webauthn', code: JSON.stringify(good) })).status).toBe(200);
    }
  });

  it('WA-06 keeps credential ids unique across users and at most 1023 bytes, and sends excludeCredentials', async () => {
    const alice = await userWithSoftKey(t);
    const options = await registrationOptions(t, alice.accessToken);
    expect(options.body.excludeCredentials).toEqual([{ id: alice.credentialId, type: 'public-key', transports: ['usb'] }]);

    const bob = await signedInUser(t);
    const bobsOptions = await registrationOptions(t, bob.accessToken);
    expectRefusedRegistration(await registrationVerify(t, bob.accessToken, alice.authenticator.attestation(bobsOptions.body)));
    expect(
      (
        await t
          .api()
          .get(MFA)
          .set(...bearer(bob.accessToken))
      ).body.enabled,
    ).toBe(false);

    const oversized = new SoftAuthenticator();
    (oversized as unknown as { credentialId: Buffer }).credentialId = randomBytes(1024);
    const big = await registrationOptions(t, bob.accessToken);
    expectRefusedRegistration(await registrationVerify(t, bob.accessToken, oversized.attestation(big.body)));
    const largest = new SoftAuthenticator();
    (largest as unknown as { credentialId: Buffer }).credentialId = randomBytes(1023);
    const ok = await registrationOptions(t, bob.accessToken);
    expect((await registrationVerify(t, bob.accessToken, largest.attestation(ok.body))).status).toBe(200);
  });

  it('WA-07 adding a key needs a token (401) and a recent sign-in (403), and notifies; a removed key stops working at once', async () => {
    const noToken = await t.api().post(`${MFA}/webauthn/register/options`).send({});
    expect([noToken.status, noToken.body.error.code]).toEqual([401, 'INVALID_TOKEN']);

    const user = await register(t, uniqueEmail('wa7'));
    const signedIn = await login(t, user.email);
    let { refreshToken, accessToken } = signedIn.body.tokens as { refreshToken: string; accessToken: string };
    for (let i = 0; i < 2; i++) {
      t.clock.advance(600);
      ({ refreshToken, accessToken } = (await t.api().post('/api/v1/auth/refresh').send({ refreshToken })).body.tokens);
    }
    const stale = await registrationOptions(t, accessToken);
    expect(stale.status).toBe(403);
    expect(stale.body).toEqual({ error: { code: 'FORBIDDEN', message: expect.stringMatching(/recent sign-in/), status: 403 } });

    const fresh = (await login(t, user.email)).body.tokens.accessToken as string;
    const key = await addSoftKey(t, fresh, 'Laptop key');
    const spare = await addSoftKey(t, fresh, 'Spare key');
    expect(await outboxNotices(t, user.email)).toEqual([
      expect.stringContaining('("Laptop key") was added'),
      expect.stringContaining('("Spare key") was added'),
    ]);

    const removed = await t
      .api()
      .delete(`${MFA}/webauthn/${encodeURIComponent(spare.authenticator.id)}`)
      .set(...bearer(fresh))
      .send({ password: PASSWORD });
    expect(removed.status).toBe(200);
    const token = await mfaToken(t, user.email);
    const { assertion } = await webauthnAnswer(t, token, spare.authenticator);
    expectRefusedAssertion(await verify(t, { mfaToken: token, type: 'webauthn', code: JSON.stringify(assertion) }));
    expect((await auditEvents(t, user.id, 'mfa.failed')).at(-1)!.details).toMatchObject({ reason: 'unknown_credential' });
    const control = await mfaToken(t, user.email);
    const { assertion: good } = await webauthnAnswer(t, control, key.authenticator);
    expect((await verify(t, { mfaToken: control, type: 'webauthn', code: JSON.stringify(good) })).status).toBe(200);
  });
});

describe('WA-01 — relying party from configuration (API level)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      env: { WEBAUTHN_RP_ID: 'login.example.test', WEBAUTHN_ORIGINS: 'https://login.example.test,https://app.example.test:8443' },
    });
  });
  afterAll(() => t?.close());

  it('WA-01 takes the rpID and the allowed origins from WEBAUTHN_RP_ID / WEBAUTHN_ORIGINS (browser ceremony: test/browser/webauthn.browser-spec.ts)', async () => {
    const user = await signedInUser(t);
    const options = await registrationOptions(t, user.accessToken);
    expect(options.body.rp.id).toBe('login.example.test');
    // The default localhost relying party is not this one.
    expectRefusedRegistration(await registrationVerify(t, user.accessToken, new SoftAuthenticator().attestation(options.body)));
    const key = new SoftAuthenticator('https://app.example.test:8443', 'login.example.test');
    const again = await registrationOptions(t, user.accessToken);
    expect((await registrationVerify(t, user.accessToken, key.attestation(again.body))).status).toBe(200);

    const token = await mfaToken(t, user.email);
    const requestOptions = await t.api().post(`${MFA}/webauthn/options`).send({ mfaToken: token });
    expect(requestOptions.body.rpId).toBe('login.example.test');
    const fromOtherOrigin = key.assertion(requestOptions.body, { origin: 'http://localhost:3000' });
    expectRefusedAssertion(await verify(t, { mfaToken: token, type: 'webauthn', code: JSON.stringify(fromOtherOrigin) }));
    for (const origin of ['https://login.example.test', 'https://app.example.test:8443']) {
      const next = await mfaToken(t, user.email);
      const { assertion } = await webauthnAnswer(t, next, key, { origin });
      expect((await verify(t, { mfaToken: next, type: 'webauthn', code: JSON.stringify(assertion) })).status).toBe(200);
    }
  });
});
