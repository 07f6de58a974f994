import { DeferredWork } from '../../src/adapters/http/deferred-work';
import { OutboxDispatcher } from '../../src/adapters/mail/outbox-dispatcher';
import { adminApi, superAdmin } from '../support/admin-flows';
import { Device, fingerprintOf, from, MAC_CHROME, MAC_CHROME_DRIFTED, WINDOWS_FIREFOX } from '../support/devices';
import { FEDERATION_ENV, FederationHarness, pkce } from '../support/federation';
import { bearer, login, PASSWORD, register, uniqueEmail } from '../support/flows';
import { addSoftKey, auditEvents, code, midStep, nextStep } from '../support/mfa';
import { AUTH, passkeySignIn } from '../support/passkeys';
import { SmtpSink } from '../support/smtp-sink';
import { SoftAuthenticator } from '../support/soft-authenticator';
import { createTestApp, TestApp } from '../support/test-app';

/** SES-01 (logout) is in rt.security.spec.ts. */

const sidOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).sid as string;

describe('SES — sessions (SECURITY.md)', () => {
  let sink: SmtpSink;
  let t: TestApp;
  beforeAll(async () => {
    sink = await SmtpSink.start();
    // TRUST_PROXY=loopback: the devices below present their own address through X-Forwarded-For.
    // FEDERATION_ENV (the admin bootstrap, and a provider on loopback): SES-04 links and unlinks.
    t = await createTestApp({ env: { ...FEDERATION_ENV, SMTP_URL: sink.url, TRUST_PROXY: 'loopback' } });
  });
  afterAll(async () => {
    await t?.close();
    await sink?.stop();
  });

  async function signIn(email: string, device: Device = MAC_CHROME) {
    const res = await from(t.api().post('/api/v1/auth/login'), device).send({
      email,
      password: PASSWORD,
      deviceFingerprint: fingerprintOf(device),
    });
    expect(res.status).toBe(200);
    return res.body.tokens as { accessToken: string; refreshToken: string };
  }

  const refresh = (refreshToken: string, device: Device = MAC_CHROME) =>
    from(t.api().post('/api/v1/auth/refresh'), device).send({ refreshToken, deviceFingerprint: fingerprintOf(device) });
  const me = (accessToken: string) =>
    t
      .api()
      .get('/api/v1/auth/me')
      .set(...bearer(accessToken));

  /** Both tokens of every given session are refused. */
  async function expectDead(...sessions: { accessToken: string; refreshToken: string }[]) {
    for (const s of sessions) {
      expect((await refresh(s.refreshToken)).status).toBe(401);
      expect((await me(s.accessToken)).status).toBe(401);
    }
  }

  it('SES-02 lists own sessions; the user revokes one or all others; an admin revokes them; suspension kills them all', async () => {
    const user = await register(t, uniqueEmail('ses'));
    const laptop = await signIn(user.email, MAC_CHROME);
    const phone = await signIn(user.email, WINDOWS_FIREFOX);
    const tablet = await signIn(user.email, WINDOWS_FIREFOX);

    const listed = await t
      .api()
      .get('/api/v1/auth/sessions')
      .set(...bearer(laptop.accessToken));
    expect(listed.body.sessions.map((s: { id: string; current: boolean }) => [s.id, s.current]).sort()).toEqual(
      [
        [sidOf(laptop.accessToken), true],
        [sidOf(phone.accessToken), false],
        [sidOf(tablet.accessToken), false],
      ].sort(),
    );
    // Another user's session is not the caller's to end.
    const stranger = await register(t, uniqueEmail('stranger'));
    const strangers = await signIn(stranger.email);
    const notMine = await t
      .api()
      .delete(`/api/v1/auth/sessions/${sidOf(strangers.accessToken)}`)
      .set(...bearer(laptop.accessToken));
    expect([notMine.status, notMine.body.error.code]).toEqual([404, 'SESSION_NOT_FOUND']);
    expect((await me(strangers.accessToken)).status).toBe(200);

    // One.
    await t
      .api()
      .delete(`/api/v1/auth/sessions/${sidOf(tablet.accessToken)}`)
      .set(...bearer(laptop.accessToken))
      .expect(200);
    await expectDead(tablet);
    // All others.
    const others = await t
      .api()
      .delete('/api/v1/auth/sessions')
      .set(...bearer(laptop.accessToken));
    expect(others.body).toEqual({ success: true, revoked: 1 });
    await expectDead(phone);
    expect((await me(laptop.accessToken)).status).toBe(200);

    // An administrator ends them all.
    const root = await superAdmin(t);
    const second = await signIn(user.email, WINDOWS_FIREFOX);
    const current = (await refresh(laptop.refreshToken)).body.tokens;
    const revoked = await adminApi(t, root.accessToken, 'default').delete(`/users/${user.id}/sessions`);
    expect(revoked.body).toEqual({ success: true, revoked: 2 });
    await expectDead(current, second);

    // Suspension kills every session, and login is refused.
    const again = [await signIn(user.email), await signIn(user.email, WINDOWS_FIREFOX)];
    await adminApi(t, root.accessToken, 'default').post(`/users/${user.id}/suspend`).send({ reason: 'investigation' }).expect(200);
    await expectDead(...again);
    expect((await login(t, user.email)).status).toBe(403);
    expect((await auditEvents(t, user.id, 'user.suspended')).length).toBe(1);
  });

  it('SES-03 a refresh from another device is refused and revokes the session, mails the owner; a benign drift passes', async () => {
    const user = await register(t, uniqueEmail('hijack'));
    // Benign: the same laptop after a browser update, on another network and time zone.
    const own = await signIn(user.email, MAC_CHROME);
    const drifted = await refresh(own.refreshToken, MAC_CHROME_DRIFTED);
    expect(drifted.status).toBe(200);

    // A thief replays the session's refresh token from another machine (other UA, hardware, address).
    const stolen = drifted.body.tokens as { accessToken: string; refreshToken: string };
    const hijack = await refresh(stolen.refreshToken, WINDOWS_FIREFOX);
    expect(hijack.status).toBe(401);
    expect(hijack.body).toEqual({ error: { code: 'REAUTHENTICATION_REQUIRED', message: expect.any(String), status: 401 } });
    expect(JSON.stringify(hijack.body)).not.toMatch(/accessToken|refreshToken/);
    // The family is gone: the owner's device must sign in again too.
    await expectDead(stolen);
    const [flagged] = await auditEvents(t, user.id, 'session.flagged');
    expect(flagged.details).toMatchObject({ reason: 'fingerprint_mismatch' });
    expect((await auditEvents(t, user.id, 'session.revoked')).at(-1)!.details).toMatchObject({ reason: 'fingerprint_mismatch' });

    await t.app.get(DeferredWork).settled();
    await t.app.get(OutboxDispatcher).dispatchDue();
    const mails = await sink.waitFor(user.email, 2);
    const notice = mails.find((m) => m.subject.startsWith('Security notice'));
    expect(notice?.text).toContain('does not match the one it was opened on');
    expect(notice?.text).toContain(WINDOWS_FIREFOX.ip);

    // A header-only change of fingerprint (X-Device-Fingerprint) is judged the same way.
    const viaHeader = await signIn(user.email, MAC_CHROME);
    const swapped = await t
      .api()
      .post('/api/v1/auth/refresh')
      .set('User-Agent', WINDOWS_FIREFOX.userAgent)
      .set('Accept-Language', WINDOWS_FIREFOX.acceptLanguage)
      .set('X-Forwarded-For', WINDOWS_FIREFOX.ip)
      .set('X-Device-Fingerprint', fingerprintOf(WINDOWS_FIREFOX)!)
      .send({ refreshToken: viaHeader.refreshToken });
    expect(swapped.status).toBe(401);
    expect((await refresh(viaHeader.refreshToken)).status).toBe(401);
  });

  describe('SES-04 a flagged session reads but adds, changes or removes no way in until it passes the step-up', () => {
    let idp: FederationHarness;
    beforeAll(async () => {
      idp = await FederationHarness.attach(t, { accounts: {} });
    });
    afterAll(async () => {
      await idp?.stop();
    });

    const NEW_PASSWORD = 'a different passphrase for this account';

    /**
     * A user with TOTP (so a refresh from another device flags the session rather than ending it),
     * a security key and a linked identity, signed in on the Mac; a passkey ceremony begun there;
     * then the session's refresh token replayed from the Windows machine.
     */
    async function flaggedSession() {
      const user = await register(t, uniqueEmail('flagged'));
      const session = await signIn(user.email, MAC_CHROME);
      const setup = await t
        .api()
        .post(`${AUTH}/mfa/totp/setup`)
        .set(...bearer(session.accessToken));
      expect(setup.status).toBe(200);
      midStep(t);
      await t
        .api()
        .post(`${AUTH}/mfa/totp/confirm`)
        .set(...bearer(session.accessToken))
        .send({ code: code(t, setup.body.secret) })
        .expect(200);
      nextStep(t);
      const key = await addSoftKey(t, session.accessToken, 'Desk key');
      const [provider] = await t.dataSource.query(`SELECT id FROM identity_providers WHERE realm_id = 'default' AND alias = 'corp'`);
      const identityId = crypto.randomUUID();
      await t.dataSource.query(
        `INSERT INTO user_identities (id, realm_id, user_id, provider_id, subject, email, linked_at) VALUES ($1, 'default', $2, $3, $4, $5, $6)`,
        [identityId, user.id, provider.id, `sub-${identityId}`, user.email, t.clock.now()],
      );
      const thief = new SoftAuthenticator();
      thief.resident = true;
      const begun = await t
        .api()
        .post(`${AUTH}/mfa/webauthn/register/options`)
        .set(...bearer(session.accessToken))
        .send({ passkey: true });
      expect(begun.status).toBe(200);

      const hijack = await refresh(session.refreshToken, WINDOWS_FIREFOX);
      expect([hijack.status, hijack.body.error.code]).toEqual([401, 'MFA_REQUIRED']);
      return {
        user,
        session,
        secret: setup.body.secret as string,
        credentialId: key.body.credential.id as string,
        identityId,
        thief,
        attestation: thief.attestation(begun.body),
      };
    }

    type Flagged = Awaited<ReturnType<typeof flaggedSession>>;

    /** Every change to the ways in, made with the flagged session's access token. */
    function changes(f: Flagged) {
      const as = <R extends { set(name: string, value: string): R }>(req: R) => req.set(...bearer(f.session.accessToken));
      return {
        'passkey options': () => as(t.api().post(`${AUTH}/mfa/webauthn/register/options`)).send({ passkey: true }),
        'security key options': () => as(t.api().post(`${AUTH}/mfa/webauthn/register/options`)).send({}),
        'passkey verify': () => as(t.api().post(`${AUTH}/mfa/webauthn/register/verify`)).send({ response: f.attestation }),
        'TOTP setup': () => as(t.api().post(`${AUTH}/mfa/totp/setup`)).send({}),
        'TOTP confirm': () => as(t.api().post(`${AUTH}/mfa/totp/confirm`)).send({ code: code(t, f.secret) }),
        'TOTP removal': () => as(t.api().delete(`${AUTH}/mfa/totp`)).send({ password: PASSWORD }),
        'security key removal': () => as(t.api().delete(`${AUTH}/mfa/webauthn/${f.credentialId}`)).send({ password: PASSWORD }),
        'recovery codes': () => as(t.api().post(`${AUTH}/mfa/recovery-codes`)).send({ password: PASSWORD }),
        'password change': () => as(t.api().post(`${AUTH}/password/change`)).send({ currentPassword: PASSWORD, newPassword: NEW_PASSWORD }),
        'link start': () =>
          as(t.api().post(`${AUTH}/federation/corp/start`)).send({ returnTo: idp.returnTo(), codeChallenge: pkce().challenge, link: true }),
        unlink: () => as(t.api().delete(`${AUTH}/identities/${f.identityId}`)).send({}),
        'link finish': () => as(t.api().post(`${AUTH}/federation/link`)).send({ code: 'c'.repeat(43), codeVerifier: pkce().verifier }),
      };
    }

    const refused = (res: { status: number; body: { error?: { code: string; message: string } } }) => ({
      status: res.status,
      code: res.body.error?.code,
      signInAgain: /sign in again/.test(res.body.error?.message ?? ''),
    });

    /** The account's ways in are those it had before the flag: nothing added, changed or removed. */
    async function expectUnchanged(f: Flagged) {
      const mfa = await t
        .api()
        .get(`${AUTH}/mfa`)
        .set(...bearer(f.session.accessToken));
      expect(mfa.status).toBe(200);
      expect(mfa.body).toMatchObject({ enabled: true, recoveryCodesRemaining: 10 });
      expect(mfa.body.methods.sort()).toEqual(['totp', 'webauthn']);
      expect(mfa.body.webauthnCredentials.map((c: { id: string }) => c.id)).toEqual([f.credentialId]);
      const identities = await t
        .api()
        .get(`${AUTH}/identities`)
        .set(...bearer(f.session.accessToken));
      expect(identities.body.identities.map((i: { id: string }) => i.id)).toEqual([f.identityId]);
      expect(await auditEvents(t, f.user.id, 'mfa.enabled')).toHaveLength(2);
      for (const type of ['mfa.disabled', 'password.changed', 'identity.unlinked']) {
        expect(await auditEvents(t, f.user.id, type)).toEqual([]);
      }
      // The password is the one it was.
      expect((await login(t, f.user.email, NEW_PASSWORD)).status).toBe(401);
      expect((await login(t, f.user.email)).body.requiresMfa).toBe(true);
    }

    it('SES-04 stolen refresh from another device flags the session → its access token registering a passkey → 403; reads go on; after the step-up the same registration works', async () => {
      const f = await flaggedSession();

      for (const [what, request] of Object.entries(changes(f))) {
        expect({ what, ...refused(await request()) }).toEqual({ what, status: 403, code: 'FORBIDDEN', signInAgain: true });
      }
      // Reads go on: the owner sees what happened.
      expect((await me(f.session.accessToken)).status).toBe(200);
      const sessions = await t
        .api()
        .get(`${AUTH}/sessions`)
        .set(...bearer(f.session.accessToken));
      expect(sessions.status).toBe(200);
      expect(sessions.body.sessions.find((s: { current: boolean }) => s.current)).toMatchObject({
        id: sidOf(f.session.accessToken),
        status: 'flagged',
      });
      await expectUnchanged(f);
      // The thief's passkey never became a way in.
      expect((await passkeySignIn(t, f.thief)).status).toBe(401);

      // The owner's step-up: the Mac's next refresh asks for the second factor, which clears the flag of the SAME session.
      const stepUp = await refresh(f.session.refreshToken, MAC_CHROME);
      expect([stepUp.status, stepUp.body.error.code]).toEqual([401, 'MFA_REQUIRED']);
      nextStep(t);
      const verified = await from(t.api().post(`${AUTH}/mfa/verify`), MAC_CHROME).send({
        mfaToken: stepUp.body.error.mfaToken,
        code: code(t, f.secret),
        type: 'totp',
        deviceFingerprint: fingerprintOf(MAC_CHROME),
      });
      expect(verified.status).toBe(200);
      expect(sidOf(verified.body.tokens.accessToken)).toBe(sidOf(f.session.accessToken));

      // Now the same access token changes the ways in again: a passkey, which then signs in.
      const owners = new SoftAuthenticator();
      owners.resident = true;
      const options = await t
        .api()
        .post(`${AUTH}/mfa/webauthn/register/options`)
        .set(...bearer(f.session.accessToken))
        .send({ passkey: true });
      expect(options.status).toBe(200);
      const registered = await t
        .api()
        .post(`${AUTH}/mfa/webauthn/register/verify`)
        .set(...bearer(f.session.accessToken))
        .send({ response: owners.attestation(options.body) });
      expect(registered.status).toBe(200);
      expect(registered.body.credential).toMatchObject({ id: expect.any(String) });
      expect((await passkeySignIn(t, owners)).status).toBe(200);
      const linkStart = await changes(f)['link start']();
      expect(linkStart.status).toBe(200);
      await changes(f).unlink().expect(200);
    });

    it('SES-04 every change sent at once right after the flag is refused, and nothing changes', async () => {
      const f = await flaggedSession();
      const all = Object.entries(changes(f));
      const answers = await Promise.all(all.map(async ([what, request]) => ({ what, ...refused(await request()) })));
      expect(answers).toEqual(all.map(([what]) => ({ what, status: 403, code: 'FORBIDDEN', signInAgain: true })));
      // Twice over, the same requests again in parallel.
      const again = await Promise.all(all.flatMap(([, request]) => [request(), request()]));
      expect(again.map((r) => r.status)).toEqual(all.flatMap(() => [403, 403]));
      await expectUnchanged(f);
    });
  });
});
