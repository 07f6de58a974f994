import { Logger } from '@nestjs/common';
import { MailMessage, MailTransport } from '../../src/application/ports/mail-transport';
import { Mailer } from '../../src/application/ports/mailer';
import { DeferredWork } from '../../src/adapters/http/deferred-work';
import { OutboxDispatcher } from '../../src/adapters/mail/outbox-dispatcher';
import { bearer, login, PASSWORD, register, uniqueEmail } from '../support/flows';
import { ADMIN_ENV, adminApi, superAdmin } from '../support/admin-flows';
import { linkToken, SmtpSink } from '../support/smtp-sink';
import { listenOnLoopback } from '../support/http-client';
import { alternatingPairs, TimingClient, decideTiming } from '../support/timing-client';
import { createTestApp, TestApp } from '../support/test-app';

/**
 * The email outbox end to end: messages are queued in the transaction of the change
 * that causes them and delivered to a real SMTP server (smtp-server on an ephemeral port) by the
 * dispatcher, which the tests drive by hand (`dispatchDue()`) with polling off.
 */

const MAIL_FROM = 'Identity Service <no-reply@identity.example>';
const NEW_PASSWORD = 'a brand new passphrase 42';

interface OutboxRow {
  id: string;
  recipient: string;
  status: string;
  attempts: number;
  next_attempt_at: Date;
  locked_until: Date | null;
  last_error: string | null;
  text_body: string;
  html_body: string;
}

/** Waits for the work resend and forgot run after answering. */
async function settled(t: TestApp): Promise<void> {
  await t.app.get(DeferredWork).settled();
}

async function outboxFor(t: TestApp, recipient: string): Promise<OutboxRow[]> {
  await settled(t);
  return t.dataSource.query(`SELECT * FROM email_outbox WHERE recipient = $1 ORDER BY created_at`, [recipient]);
}

async function auditTypes(t: TestApp, userId: string): Promise<string[]> {
  const rows: { type: string }[] = await t.dataSource.query(`SELECT type FROM audit_events WHERE user_id = $1 ORDER BY at, type`, [userId]);
  return rows.map((r) => r.type);
}

function dispatcher(t: TestApp): OutboxDispatcher {
  return t.app.get(OutboxDispatcher);
}

/** A further dispatcher on the same database, as another instance would run it. */
function anotherDispatcher(t: TestApp, transport: MailTransport = t.app.get(MailTransport)): OutboxDispatcher {
  return new OutboxDispatcher(t.dataSource, transport, t.clock, t.config);
}

async function deliverAll(t: TestApp) {
  await settled(t);
  return dispatcher(t).dispatchDue();
}

/** Registers, delivers, and returns the link token of the verification email. */
async function registeredWithMail(t: TestApp, sink: SmtpSink, realm?: string) {
  const user = await register(t, uniqueEmail('mail'), PASSWORD, realm);
  await deliverAll(t);
  const [mail] = await sink.waitFor(user.email);
  return { ...user, mail, token: linkToken(mail, '/verify-email') };
}

async function forgot(t: TestApp, email: string, realm?: string) {
  const req = t.api().post('/api/v1/auth/password/forgot');
  if (realm) req.set('X-Realm-Id', realm);
  return req.send({ email });
}

/** Messages to `email` with this subject, in arrival order (a pass sends in parallel, so order across subjects is not fixed). */
async function mailsWithSubject(sink: SmtpSink, email: string, subject: string, count = 1) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const found = sink.to(email).filter((m) => m.subject === subject);
    if (found.length >= count) return found;
    if (Date.now() > deadline) throw new Error(`expected ${count} "${subject}" message(s) to ${email}, got ${found.length}`);
    await sink.waitFor(email, sink.to(email).length + 1, Math.max(1, deadline - Date.now())).catch(() => undefined);
  }
}

const RESET_SUBJECT = 'Reset your password — Default';
const CHANGED_SUBJECT = 'Your password was changed — Default';

async function resetTokenFor(t: TestApp, sink: SmtpSink, email: string): Promise<string> {
  const before = sink.to(email).filter((m) => m.subject === RESET_SUBJECT).length;
  const res = await forgot(t, email);
  expect(res.status).toBe(202);
  await deliverAll(t);
  const mails = await mailsWithSubject(sink, email, RESET_SUBJECT, before + 1);
  return linkToken(mails[mails.length - 1], '/reset-password');
}

describe('email: outbox, SMTP delivery, verification and password recovery', () => {
  let sink: SmtpSink;
  let t: TestApp;

  beforeAll(async () => {
    sink = await SmtpSink.start();
    t = await createTestApp({
      env: { ...ADMIN_ENV, SMTP_URL: sink.url, MAIL_FROM, PUBLIC_URL: 'https://app.example.test', OUTBOX_MAX_ATTEMPTS: '3' },
    });
    await t.dataSource.query(`INSERT INTO realms (id, name, created_at) VALUES ('other', 'Other Realm', now())`);
  });
  afterAll(async () => {
    try {
      await t?.close();
    } finally {
      await sink?.stop();
    }
  });

  describe('verification email', () => {
    it('arrives over SMTP with the link in both parts, and its token verifies the address exactly once', async () => {
      const { id, email, mail, token } = await registeredWithMail(t, sink);
      expect(sink.to(email)).toHaveLength(1);
      expect(mail.envelopeFrom).toBe('no-reply@identity.example');
      expect(mail.headers.from).toContain('no-reply@identity.example');
      expect(mail.subject).toBe('Verify your email address — Default');
      expect(mail.text).toContain(`https://app.example.test/verify-email?token=${token}`);
      expect(mail.html).toContain(`https://app.example.test/verify-email?token=${token}`);
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);

      const first = await t.api().post('/api/v1/auth/verify-email').send({ token });
      expect(first.status).toBe(200);
      expect(first.body).toEqual({ success: true });
      const again = await t.api().post('/api/v1/auth/verify-email').send({ token });
      expect(again.status).toBe(400);
      expect(again.body).toEqual({ error: { code: 'INVALID_VERIFICATION_TOKEN', message: expect.any(String), status: 400 } });

      const signedIn = await login(t, email);
      expect(signedIn.body.user.emailVerified).toBe(true);
      const me = await t
        .api()
        .get('/api/v1/auth/me')
        .set(...bearer(signedIn.body.tokens.accessToken));
      expect(me.body.user.emailVerified).toBe(true);
      expect(await auditTypes(t, id)).toEqual(expect.arrayContaining(['user.registered', 'email.verified']));
    });

    it('keeps no link token in the outbox once the message is sent', async () => {
      const { email, token } = await registeredWithMail(t, sink);
      const [row] = await outboxFor(t, email);
      expect(row).toMatchObject({ status: 'sent', attempts: 1, locked_until: null, last_error: null, text_body: '', html_body: '' });
      const stored: { token_hash: string }[] = await t.dataSource.query(
        `SELECT token_hash FROM one_time_tokens WHERE kind = 'email_verification'`,
      );
      expect(stored.map((s) => s.token_hash)).not.toContain(token);
    });

    it('refuses an unknown, malformed or expired token with 400 INVALID_VERIFICATION_TOKEN', async () => {
      const { token } = await registeredWithMail(t, sink);
      for (const bad of ['x'.repeat(43), 'not a token', token.slice(0, -1)]) {
        const res = await t.api().post('/api/v1/auth/verify-email').send({ token: bad });
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('INVALID_VERIFICATION_TOKEN');
      }
      t.clock.advance(24 * 3600 + 1);
      try {
        const expired = await t.api().post('/api/v1/auth/verify-email').send({ token });
        expect(expired.status).toBe(400);
        expect(expired.body.error.code).toBe('INVALID_VERIFICATION_TOKEN');
      } finally {
        t.clock.advance(-(24 * 3600 + 1));
      }
      const missing = await t.api().post('/api/v1/auth/verify-email').send({});
      expect(missing.status).toBe(400);
      expect(missing.body.error.code).toBe('VALIDATION_FAILED');
    });

    it('binds the token to its realm: a token of realm "other" fails in "default" and works in "other"', async () => {
      const { token, mail } = await registeredWithMail(t, sink, 'other');
      expect(mail.subject).toBe('Verify your email address — Other Realm');
      const wrongRealm = await t.api().post('/api/v1/auth/verify-email').send({ token });
      expect(wrongRealm.status).toBe(400);
      expect(wrongRealm.body.error.code).toBe('INVALID_VERIFICATION_TOKEN');
      const rightRealm = await t.api().post('/api/v1/auth/verify-email').set('X-Realm-Id', 'other').send({ token });
      expect(rightRealm.status).toBe(200);
    });

    it('binds the token to the address it was sent to', async () => {
      const { id, token } = await registeredWithMail(t, sink);
      await t.dataSource.query(`UPDATE users SET email = $2 WHERE id = $1`, [id, uniqueEmail('changed')]);
      const res = await t.api().post('/api/v1/auth/verify-email').send({ token });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('INVALID_VERIFICATION_TOKEN');
    });

    it('lets exactly one of ten parallel uses of a token succeed', async () => {
      const { token } = await registeredWithMail(t, sink);
      const results = await Promise.all(Array.from({ length: 10 }, () => t.api().post('/api/v1/auth/verify-email').send({ token })));
      expect(results.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(400)]);
    });
  });

  describe('POST /verify-email/resend', () => {
    it('answers 202 {"success": true} for an unknown address and sends nothing', async () => {
      const email = uniqueEmail('nobody');
      const res = await t.api().post('/api/v1/auth/verify-email/resend').send({ email });
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ success: true });
      expect(await outboxFor(t, email)).toHaveLength(0);
    });

    it('sends a new link to an unverified user and voids the previous one', async () => {
      const { email, token: oldToken } = await registeredWithMail(t, sink);
      const res = await t
        .api()
        .post('/api/v1/auth/verify-email/resend')
        .send({ email: `  ${email.toUpperCase()} ` });
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ success: true });
      await deliverAll(t);
      const mails = await sink.waitFor(email, 2);
      const newToken = linkToken(mails[1], '/verify-email');
      expect(newToken).not.toBe(oldToken);
      expect((await t.api().post('/api/v1/auth/verify-email').send({ token: oldToken })).status).toBe(400);
      expect((await t.api().post('/api/v1/auth/verify-email').send({ token: newToken })).status).toBe(200);
    });

    it('answers the same 202 for a verified user without sending anything', async () => {
      const { email, token } = await registeredWithMail(t, sink);
      await t.api().post('/api/v1/auth/verify-email').send({ token });
      const res = await t.api().post('/api/v1/auth/verify-email/resend').send({ email });
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ success: true });
      expect(await outboxFor(t, email)).toHaveLength(1);
    });

    it('still validates the body: a malformed address is 400 VALIDATION_FAILED', async () => {
      const res = await t.api().post('/api/v1/auth/verify-email/resend').send({ email: 'no-at-sign' });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
    });
  });

  describe('password recovery: forgot → reset', () => {
    it('emails a 1-hour reset link; reset sets the password, ends every session, and the link works once', async () => {
      const { id, email } = await register(t, uniqueEmail('reset'));
      const phone = await login(t, email);
      const laptop = await login(t, email);
      const token = await resetTokenFor(t, sink, email);
      const [resetMail] = await mailsWithSubject(sink, email, RESET_SUBJECT);
      expect(resetMail.text).toContain(`https://app.example.test/reset-password?token=${token}`);

      const reset = await t.api().post('/api/v1/auth/password/reset').send({ token, password: NEW_PASSWORD });
      expect(reset.status).toBe(200);
      expect(reset.body).toEqual({ success: true });

      expect((await login(t, email, PASSWORD)).status).toBe(401);
      const fresh = await login(t, email, NEW_PASSWORD);
      expect(fresh.status).toBe(200);
      for (const old of [phone, laptop]) {
        const refreshed = await t.api().post('/api/v1/auth/refresh').send({ refreshToken: old.body.tokens.refreshToken });
        expect(refreshed.status).toBe(401);
        expect(refreshed.body.error.code).toBe('INVALID_TOKEN');
        const me = await t
          .api()
          .get('/api/v1/auth/me')
          .set(...bearer(old.body.tokens.accessToken));
        expect(me.status).toBe(401);
      }

      const again = await t.api().post('/api/v1/auth/password/reset').send({ token, password: 'yet another passphrase 7' });
      expect(again.status).toBe(400);
      expect(again.body.error.code).toBe('INVALID_VERIFICATION_TOKEN');
      expect((await login(t, email, NEW_PASSWORD)).status).toBe(200);

      await deliverAll(t);
      const [notice] = await mailsWithSubject(sink, email, CHANGED_SUBJECT);
      expect(notice.text).toContain('password of your account was just changed');
      expect(sink.to(email)).toHaveLength(3);
      expect(await auditTypes(t, id)).toEqual(expect.arrayContaining(['user.password_reset', 'email.verified']));
      expect(fresh.body.user.emailVerified).toBe(true);
    });

    it('answers 202 {"success": true} for an unknown address, with the same body as for a known one', async () => {
      const { email } = await register(t, uniqueEmail('known'));
      const unknown = uniqueEmail('unknown');
      const a = await forgot(t, email);
      const b = await forgot(t, unknown);
      expect([a.status, b.status]).toEqual([202, 202]);
      expect(a.body).toEqual({ success: true });
      expect(b.body).toEqual(a.body);
      expect(await outboxFor(t, unknown)).toHaveLength(0);
      expect((await outboxFor(t, email)).length).toBe(2);
    });

    it('answers an unknown address in about the time of a known one', async () => {
      const { email } = await register(t, uniqueEmail('timing'));
      const ghost = uniqueEmail('ghost');
      // Timed from another process, as a remote client sees it (see TimingClient).
      const client = new TimingClient(await listenOnLoopback(t));
      const request = (target: string) => ({ method: 'POST', path: '/api/v1/auth/password/forgot', body: { email: target } });
      let result;
      try {
        // Pairs in alternating order, each request after the sending of the one before has
        // finished: on the embedded database, a reset link's token and email take longer than
        // finding no account, and delay a request sent right after them.
        // Sending before answering would put the lookup and the outbox writes on the known side.
        result = await decideTiming(async () => {
          const timings = await alternatingPairs(
            client,
            { known: request(email), unknown: request(ghost) },
            { pairs: 100, settle: () => settled(t), backToBack: false },
          );
          for (const res of [...timings.known, ...timings.unknown]) expect(res.status).toBe(202);
          return timings;
        });
      } finally {
        client.close();
      }
      // The reset emails of every round go out now, so the tests that follow wait for their own only.
      await settled(t);
      while ((await dispatcher(t).dispatchDue()).sent > 0);
      expect(result).toEqual({ ...result, within: true });
    });

    it('voids the older reset link when a new one is requested', async () => {
      const { email } = await register(t, uniqueEmail('twice'));
      const first = await resetTokenFor(t, sink, email);
      const second = await resetTokenFor(t, sink, email);
      expect((await t.api().post('/api/v1/auth/password/reset').send({ token: first, password: NEW_PASSWORD })).status).toBe(400);
      expect((await t.api().post('/api/v1/auth/password/reset').send({ token: second, password: NEW_PASSWORD })).status).toBe(200);
    });

    it('refuses an expired reset link (1 hour)', async () => {
      const { email } = await register(t, uniqueEmail('late'));
      const token = await resetTokenFor(t, sink, email);
      t.clock.advance(3601);
      try {
        const res = await t.api().post('/api/v1/auth/password/reset').send({ token, password: NEW_PASSWORD });
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('INVALID_VERIFICATION_TOKEN');
      } finally {
        t.clock.advance(-3601);
      }
      expect((await login(t, email)).status).toBe(200);
    });

    it('refuses a weak password with 400 VALIDATION_FAILED and leaves the link usable', async () => {
      const { email } = await register(t, uniqueEmail('weak'));
      const token = await resetTokenFor(t, sink, email);
      const weak = await t.api().post('/api/v1/auth/password/reset').send({ token, password: 'password1234' });
      expect(weak.status).toBe(400);
      expect(weak.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [expect.objectContaining({ field: 'password' })] });
      expect((await login(t, email)).status).toBe(200);
      expect((await t.api().post('/api/v1/auth/password/reset').send({ token, password: NEW_PASSWORD })).status).toBe(200);
    });

    it('does not accept a reset token at /verify-email, nor a verification token at /password/reset', async () => {
      const { email, token: verification } = await registeredWithMail(t, sink);
      const reset = await resetTokenFor(t, sink, email);
      expect((await t.api().post('/api/v1/auth/verify-email').send({ token: reset })).status).toBe(400);
      expect((await t.api().post('/api/v1/auth/password/reset').send({ token: verification, password: NEW_PASSWORD })).status).toBe(400);
    });

    it('sends nothing to a suspended account', async () => {
      const { id, email } = await register(t, uniqueEmail('suspended'));
      await t.dataSource.query(`UPDATE users SET status = 'suspended' WHERE id = $1`, [id]);
      expect((await forgot(t, email)).status).toBe(202);
      expect(await outboxFor(t, email)).toHaveLength(1); // only the verification email of registration
    });
  });

  describe('POST /password/change', () => {
    it('changes the password, keeps the current session, ends the others and notifies the owner', async () => {
      const { id, email } = await register(t, uniqueEmail('change'));
      const current = await login(t, email);
      const other = await login(t, email);
      const res = await t
        .api()
        .post('/api/v1/auth/password/change')
        .set(...bearer(current.body.tokens.accessToken))
        .send({ currentPassword: PASSWORD, newPassword: NEW_PASSWORD });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true });

      expect(
        (
          await t
            .api()
            .get('/api/v1/auth/me')
            .set(...bearer(current.body.tokens.accessToken))
        ).status,
      ).toBe(200);
      expect((await t.api().post('/api/v1/auth/refresh').send({ refreshToken: current.body.tokens.refreshToken })).status).toBe(200);
      expect(
        (
          await t
            .api()
            .get('/api/v1/auth/me')
            .set(...bearer(other.body.tokens.accessToken))
        ).status,
      ).toBe(401);
      const otherRefresh = await t.api().post('/api/v1/auth/refresh').send({ refreshToken: other.body.tokens.refreshToken });
      expect(otherRefresh.status).toBe(401);
      expect(otherRefresh.body.error.code).toBe('INVALID_TOKEN');

      expect((await login(t, email, PASSWORD)).status).toBe(401);
      expect((await login(t, email, NEW_PASSWORD)).status).toBe(200);
      await deliverAll(t);
      const [notice] = await mailsWithSubject(sink, email, CHANGED_SUBJECT);
      expect(notice.text).toContain('password of your account was just changed');
      expect(await auditTypes(t, id)).toContain('password.changed');
    });

    it('refuses a wrong current password with 401 INVALID_CREDENTIALS and counts it towards the lockout', async () => {
      const { id, email } = await register(t, uniqueEmail('wrongcurrent'));
      const session = await login(t, email);
      const res = await t
        .api()
        .post('/api/v1/auth/password/change')
        .set(...bearer(session.body.tokens.accessToken))
        .send({ currentPassword: 'not my password at all', newPassword: NEW_PASSWORD });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('INVALID_CREDENTIALS');
      const [row]: { failed_login_count: number }[] = await t.dataSource.query(`SELECT failed_login_count FROM users WHERE id = $1`, [id]);
      expect(Number(row.failed_login_count)).toBe(1);
      expect((await login(t, email, PASSWORD)).status).toBe(200);
    });

    it('applies the password policy to the new password and refuses the current one as new', async () => {
      const { email } = await register(t, uniqueEmail('policy'));
      const session = await login(t, email);
      for (const newPassword of ['password1234', 'short', PASSWORD]) {
        const res = await t
          .api()
          .post('/api/v1/auth/password/change')
          .set(...bearer(session.body.tokens.accessToken))
          .send({ currentPassword: PASSWORD, newPassword });
        expect(res.status).toBe(400);
        expect(res.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [expect.objectContaining({ field: 'newPassword' })] });
      }
      expect((await login(t, email, PASSWORD)).status).toBe(200);
    });

    it('needs an access token', async () => {
      const res = await t.api().post('/api/v1/auth/password/change').send({ currentPassword: PASSWORD, newPassword: NEW_PASSWORD });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('INVALID_TOKEN');
    });
  });

  describe('emails an administrator causes', () => {
    it('POST /v1/admin/users without a password invites the user, whose link sets the password', async () => {
      const root = await superAdmin(t);
      const email = uniqueEmail('invited');
      const created = await adminApi(t, root.accessToken, 'default').post('/users').send({ email, name: 'Invited User' });
      expect(created.status).toBe(201);
      expect((await login(t, email, PASSWORD)).status).toBe(401);
      await deliverAll(t);
      const [invitation] = await mailsWithSubject(sink, email, 'Your new account — Default');
      const token = linkToken(invitation, '/reset-password');
      const reset = await t.api().post('/api/v1/auth/password/reset').send({ token, password: NEW_PASSWORD });
      expect(reset.status).toBe(200);
      const signedIn = await login(t, email, NEW_PASSWORD);
      expect(signedIn.status).toBe(200);
      expect(signedIn.body.user.emailVerified).toBe(true);
    });

    it('POST /v1/admin/users/:id/reset-password without a body emails a reset link and ends the sessions', async () => {
      const root = await superAdmin(t);
      const { id, email } = await register(t, uniqueEmail('adminreset'));
      const session = await login(t, email);
      const res = await adminApi(t, root.accessToken, 'default').post(`/users/${id}/reset-password`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, method: 'email' });
      expect((await t.api().post('/api/v1/auth/refresh').send({ refreshToken: session.body.tokens.refreshToken })).status).toBe(401);
      await deliverAll(t);
      const [mail] = await mailsWithSubject(sink, email, RESET_SUBJECT);
      const token = linkToken(mail, '/reset-password');
      expect((await t.api().post('/api/v1/auth/password/reset').send({ token, password: NEW_PASSWORD })).status).toBe(200);
      expect((await login(t, email, NEW_PASSWORD)).status).toBe(200);
    });
  });

  describe('delivery guarantees', () => {
    // Start each test with nothing due, so the dispatch reports count only its own messages.
    beforeEach(async () => {
      await deliverAll(t);
    });

    it('survives an SMTP outage: the message waits in the outbox and arrives after the server is back', async () => {
      await sink.stop();
      let email: string;
      try {
        ({ email } = await register(t, uniqueEmail('outage')));
        const report = await deliverAll(t);
        expect(report).toEqual({ sent: 0, retrying: 1, failed: 0 });
        const [row] = await outboxFor(t, email);
        expect(row).toMatchObject({ status: 'pending', attempts: 1, locked_until: null });
        expect(row.last_error).toEqual(expect.any(String));
        const ready = await t.api().get('/health/ready');
        expect(ready.status).toBe(200);
        expect(ready.body.checks['outbox.pending']).toEqual({ ok: true, detail: expect.any(Number) });
        expect(ready.body.checks['outbox.pending'].detail).toBeGreaterThanOrEqual(1);
      } finally {
        await sink.restart();
      }
      // Back off: not due again before the retry delay (30 s at the first failure).
      expect(await deliverAll(t)).toEqual({ sent: 0, retrying: 0, failed: 0 });
      t.clock.advance(30);
      expect(await deliverAll(t)).toEqual({ sent: 1, retrying: 0, failed: 0 });
      const [mail] = await sink.waitFor(email);
      expect(linkToken(mail, '/verify-email')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(sink.to(email)).toHaveLength(1);
      expect((await outboxFor(t, email))[0]).toMatchObject({ status: 'sent', attempts: 2 });
    });

    it('marks a message failed after the last attempt, keeps it, and reports it on /health/ready', async () => {
      await sink.stop();
      let email: string;
      try {
        ({ email } = await register(t, uniqueEmail('doomed')));
        expect(await deliverAll(t)).toEqual({ sent: 0, retrying: 1, failed: 0 });
        t.clock.advance(30);
        expect(await deliverAll(t)).toEqual({ sent: 0, retrying: 1, failed: 0 });
        t.clock.advance(60);
        expect(await deliverAll(t)).toEqual({ sent: 0, retrying: 0, failed: 1 });
      } finally {
        await sink.restart();
      }
      const [row] = await outboxFor(t, email);
      expect(row).toMatchObject({ status: 'failed', attempts: 3, locked_until: null });
      expect(row.text_body).toContain('/verify-email?token=');
      t.clock.advance(7200);
      expect(await deliverAll(t)).toEqual({ sent: 0, retrying: 0, failed: 0 });
      expect(sink.to(email)).toHaveLength(0);
      const ready = await t.api().get('/health/ready');
      expect(ready.status).toBe(200);
      expect(ready.body.checks['outbox.failed']).toEqual({ ok: false, detail: expect.any(Number) });
      expect(ready.body.checks['outbox.failed'].detail).toBeGreaterThanOrEqual(1);
    });

    it('loses nothing when a dispatcher dies between claim and send: the lease runs out and another sends it', async () => {
      const emails = Array.from({ length: 8 }, () => uniqueEmail('crash'));
      const mailer = t.app.get(Mailer);
      for (const to of emails)
        await mailer.enqueue({ realmId: 'default', to, subject: 'Crash test', text: `Hello ${to}`, html: `<p>Hello ${to}</p>` });

      // Instance A forwards two messages, then freezes inside send() — as if killed mid-pass.
      const real = t.app.get(MailTransport);
      let forwarded = 0;
      const frozen: ((error: Error) => void)[] = [];
      const dying: MailTransport = {
        send: (message: MailMessage) => {
          if (forwarded < 2) {
            forwarded += 1;
            return real.send(message);
          }
          return new Promise<void>((_, reject) => frozen.push(reject));
        },
      };
      const a = anotherDispatcher(t, dying);
      const aPass = a.dispatchDue();
      const deadline = Date.now() + 10_000;
      while (frozen.length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(frozen).toHaveLength(4); // every worker of A is stuck holding a claimed message

      const b = dispatcher(t);
      expect(await b.dispatchDue()).toEqual({ sent: 2, retrying: 0, failed: 0 }); // the unclaimed rest
      expect(await b.dispatchDue()).toEqual({ sent: 0, retrying: 0, failed: 0 }); // A's four are leased
      t.clock.advance(t.config.outboxLeaseSeconds + 1);
      expect(await b.dispatchDue()).toEqual({ sent: 4, retrying: 0, failed: 0 });

      for (const to of emails) await sink.waitFor(to);
      expect(emails.map((to) => sink.to(to).length)).toEqual(Array(8).fill(1));

      // A wakes up late: its stale outcome must not touch rows it no longer holds.
      for (const reject of frozen) reject(new Error('connection reset'));
      await aPass;
      const rows: { status: string }[] = await t.dataSource.query(`SELECT status FROM email_outbox WHERE recipient = ANY($1)`, [emails]);
      expect(rows.map((r) => r.status)).toEqual(Array(8).fill('sent'));
      await a.drain();
    });

    it('delivers each message exactly once when several dispatchers run at the same time', async () => {
      const emails = Array.from({ length: 40 }, () => uniqueEmail('race'));
      const mailer = t.app.get(Mailer);
      for (const to of emails) await mailer.enqueue({ realmId: 'default', to, subject: 'Race', text: `Hi ${to}`, html: `<p>Hi ${to}</p>` });
      const dispatchers = [dispatcher(t), anotherDispatcher(t), anotherDispatcher(t)];
      const reports = await Promise.all(dispatchers.map((d) => d.dispatchDue()));
      expect(reports.reduce((sum, r) => sum + r.sent, 0)).toBe(40);
      for (const to of emails) await sink.waitFor(to);
      expect(emails.map((to) => sink.to(to).length)).toEqual(Array(40).fill(1));
      const ids = new Set(emails.map((to) => sink.to(to)[0].messageId));
      expect(ids.size).toBe(40);
    });

    it('refuses CR/LF in the recipient or subject (no header injection): marked failed at once, nothing sent', async () => {
      const victim = uniqueEmail('victim');
      const evil = uniqueEmail('evil');
      const mailer = t.app.get(Mailer);
      await mailer.enqueue({ realmId: 'default', to: `${victim}\r\nBcc: ${evil}`, subject: 'Hi', text: 'x', html: 'x' });
      await mailer.enqueue({ realmId: 'default', to: victim, subject: `Hi\r\nBcc: ${evil}`, text: 'x', html: 'x' });
      expect(await deliverAll(t)).toEqual({ sent: 0, retrying: 0, failed: 2 });
      expect(sink.to(victim)).toHaveLength(0);
      expect(sink.to(evil)).toHaveLength(0);
      const rows: { status: string; last_error: string }[] = await t.dataSource.query(
        // Both were queued at the same instant of the test clock: order by what tells them apart.
        `SELECT status, last_error FROM email_outbox WHERE recipient LIKE $1 ORDER BY last_error`,
        [`${victim}%`],
      );
      expect(rows).toEqual([
        { status: 'failed', last_error: 'the recipient contains a line break' },
        { status: 'failed', last_error: 'the subject contains a line break' },
      ]);
    });

    it('refuses a CR/LF header injection at registration with 400 before anything is queued', async () => {
      const evil = uniqueEmail('bcc');
      const res = await t
        .api()
        .post('/api/v1/auth/register')
        .send({ email: `a@example.com\r\nBcc: ${evil}`, password: PASSWORD, name: 'Eve' });
      expect(res.status).toBe(400);
      expect(await outboxFor(t, evil)).toHaveLength(0);
    });
  });
});

describe('email: a second instance on the same PostgreSQL database', () => {
  const onServer = process.env.DATABASE_URL ? it : it.skip;
  let sink: SmtpSink;
  let first: TestApp | undefined;
  let second: TestApp | undefined;

  beforeAll(async () => {
    sink = await SmtpSink.start();
  });
  afterAll(async () => {
    try {
      await second?.close();
      await first?.close();
    } finally {
      await sink?.stop();
    }
  });

  onServer('two app instances dispatching at once deliver each message exactly once', async () => {
    const env = { SMTP_URL: sink.url, MAIL_FROM };
    first = await createTestApp({ env });
    second = await createTestApp({ env, database: first.database });
    const emails: string[] = [];
    for (let i = 0; i < 15; i += 1) emails.push((await register(i % 2 ? first : second, uniqueEmail('twin'))).email);
    const reports = await Promise.all([first.app.get(OutboxDispatcher).dispatchDue(), second.app.get(OutboxDispatcher).dispatchDue()]);
    expect(reports[0].sent + reports[1].sent).toBe(15);
    for (const to of emails) await sink.waitFor(to);
    expect(emails.map((to) => sink.to(to).length)).toEqual(Array(15).fill(1));
  });
});

describe('email: the dispatcher polling on its own, as in production', () => {
  let sink: SmtpSink;
  let t: TestApp;

  beforeAll(async () => {
    sink = await SmtpSink.start();
    t = await createTestApp({ env: { SMTP_URL: sink.url, MAIL_FROM, OUTBOX_POLL_INTERVAL_MS: '50', RATE_LIMIT_EMAIL: '3/3600' } });
  });
  afterAll(async () => {
    try {
      await t?.close();
    } finally {
      await sink?.stop();
    }
  });

  it('delivers the verification email without being asked, and the link verifies the address', async () => {
    const { email } = await register(t, uniqueEmail('poll'));
    const [mail] = await sink.waitFor(email);
    const res = await t
      .api()
      .post('/api/v1/auth/verify-email')
      .send({ token: linkToken(mail, '/verify-email') });
    expect(res.status).toBe(200);
  });

  it('limits resend and forgot together to RATE_LIMIT_EMAIL per client IP (429 with Retry-After)', async () => {
    const email = uniqueEmail('limited');
    const statuses: number[] = [];
    for (const path of ['verify-email/resend', 'password/forgot', 'verify-email/resend']) {
      statuses.push((await t.api().post(`/api/v1/auth/${path}`).send({ email })).status);
    }
    const limited = await t.api().post('/api/v1/auth/password/forgot').send({ email });
    expect(statuses).toEqual([202, 202, 202]);
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });
});

describe('email: without SMTP_URL the message and its link go to the log', () => {
  let t: TestApp;
  const logged: string[] = [];

  beforeAll(async () => {
    jest.spyOn(Logger.prototype, 'log').mockImplementation((message: unknown) => void logged.push(String(message)));
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
    jest.restoreAllMocks();
  });

  it('logs the verification link, and the token from the log verifies the address', async () => {
    expect(t.config.smtpUrl).toBeNull();
    const { email } = await register(t, uniqueEmail('logged'));
    expect(await deliverAll(t)).toEqual({ sent: 1, retrying: 0, failed: 0 });
    const line = logged.find((m) => m.startsWith(`Email to ${email} `));
    expect(line).toBeDefined();
    const token = /link: http:\/\/localhost:3000\/verify-email\?token=([A-Za-z0-9_-]{43})/.exec(line as string)?.[1];
    expect(token).toBeDefined();
    const res = await t.api().post('/api/v1/auth/verify-email').send({ token });
    expect(res.status).toBe(200);
  });
});
