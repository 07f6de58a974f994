/**
 * Passkey sign-in's owner check, and what an account takeover must win against: requests of the
 * squatter that were already running when it committed. The takeover is driven as its callers
 * drive it (the user read under its row lock, `AccountTakeover` in the same transaction); the
 * races are made deterministic by holding a squatter's request at a port (the password hasher,
 * the relying party) until the takeover has committed.
 */
import { AccountTakeover } from '../../src/application/account/account-takeover';
import { MfaCredentialRepository } from '../../src/application/ports/mfa-credential.repository';
import { PasswordHasher } from '../../src/application/ports/password-hasher';
import { SecretCipher } from '../../src/application/ports/secret-cipher';
import { Transaction } from '../../src/application/ports/transaction';
import { UserRepository } from '../../src/application/ports/user.repository';
import { WebAuthnRelyingParty } from '../../src/application/ports/webauthn-relying-party';
import { bearer, login, PASSWORD, signedInUser } from '../support/flows';
import { code, midStep, userWithTotp } from '../support/mfa';
import { addPasskey, AUTH, passkeySignIn } from '../support/passkeys';
import { SoftAuthenticator } from '../support/soft-authenticator';
import { createTestApp, TestApp } from '../support/test-app';

jest.setTimeout(60_000);

/** A promise the test opens when it wants: `reached` tells the request got there, `release` lets it go on. */
function gate() {
  let reached!: () => void;
  let release!: () => void;
  const arrived = new Promise<void>((resolve) => (reached = resolve));
  const opened = new Promise<void>((resolve) => (release = resolve));
  return { arrived, opened, reached, release };
}

describe('passkey sign-in and account takeover under concurrent requests', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await t.close();
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });

  /** The victim proves the address (an identity provider, an email code): the squatter's account is taken over. */
  async function takeOver(userId: string) {
    const tx = t.app.get(Transaction);
    const users = t.app.get(UserRepository);
    const takeover = t.app.get(AccountTakeover);
    await tx.run(async () => {
      const user = await users.findByIdForUpdate('default', userId);
      if (!user) throw new Error('no such user');
      await takeover.execute({
        user,
        now: t.clock.now(),
        ip: '198.51.100.7',
        event: { type: 'email.verified', details: { method: 'email-code' } },
      });
    });
  }

  const me = (accessToken: string) =>
    t
      .api()
      .get(`${AUTH}/me`)
      .set(...bearer(accessToken));

  describe('PWL-01: only discoverable credentials sign in', () => {
    it('refuses a passkey assertion that carries no userHandle', async () => {
      const user = await signedInUser(t);
      const { authenticator } = await addPasskey(t, user.accessToken);
      // Answered as a non-resident credential does: no user handle. With an empty allowCredentials
      // the user was not identified before the ceremony, so the handle must be present.
      authenticator.resident = false;
      const res = await passkeySignIn(t, authenticator);
      expect(res.status).toBe(401);
      expect(res.body.error?.code).toBe('INVALID_CREDENTIALS');
    });

    it('refuses a passkey assertion whose userHandle is unreadable instead of skipping the owner check', async () => {
      const user = await signedInUser(t);
      const { authenticator } = await addPasskey(t, user.accessToken);
      // Not base64url: read as "no handle", so the comparison with the owner is skipped.
      const res = await passkeySignIn(t, authenticator, { userHandle: '***not-base64url***' });
      expect(res.status).toBe(401);
    });
  });

  describe('FED-03: a takeover leaves the squatter nothing, whatever was in flight', () => {
    it('a takeover with nothing in flight removes the password, the passkey and the sessions', async () => {
      const squatter = await signedInUser(t);
      const { authenticator } = await addPasskey(t, squatter.accessToken);
      await takeOver(squatter.id);
      expect((await me(squatter.accessToken)).status).toBe(401);
      expect((await login(t, squatter.email, PASSWORD)).status).toBe(401);
      expect((await passkeySignIn(t, authenticator)).status).toBe(401);
    });

    it('refuses a squatter password login whose password was checked before the takeover and whose session would open after it', async () => {
      const squatter = await signedInUser(t);
      const hasher = t.app.get(PasswordHasher);
      const realVerify = hasher.verify.bind(hasher);
      const g = gate();
      jest.spyOn(hasher, 'verify').mockImplementationOnce(async (password, hash) => {
        const matched = await realVerify(password, hash);
        g.reached();
        await g.opened;
        return matched;
      });
      const pending = login(t, squatter.email, PASSWORD).then((r) => r);
      await g.arrived;
      await takeOver(squatter.id);
      g.release();
      const res = await pending;
      // The password it proved no longer exists: no session may come of it.
      const meStatus = res.status === 200 ? (await me(res.body.tokens.accessToken)).status : null;
      expect({ login: res.status, me: meStatus }).toEqual({ login: 401, me: null });
    });

    it('does not keep a passkey the squatter finished registering while the takeover ran', async () => {
      const squatter = await signedInUser(t);
      const relyingParty = t.app.get(WebAuthnRelyingParty);
      const realVerify = relyingParty.verifyRegistration.bind(relyingParty);
      const g = gate();
      jest.spyOn(relyingParty, 'verifyRegistration').mockImplementationOnce(async (response, challenge, rp) => {
        g.reached();
        await g.opened;
        return realVerify(response, challenge, rp);
      });
      const authenticator = new SoftAuthenticator();
      const pending = addPasskey(t, squatter.accessToken, authenticator).then(
        () => 'registered',
        (error: Error) => error.message,
      );
      await g.arrived;
      await takeOver(squatter.id);
      g.release();
      await pending;
      // The squatter's passkey must not sign in to the account the victim just claimed.
      const res = await passkeySignIn(t, authenticator);
      expect(res.status).toBe(401);
    });

    it('does not keep an authenticator app the squatter confirmed while the takeover ran', async () => {
      const squatter = await signedInUser(t);
      const setup = () =>
        t
          .api()
          .post(`${AUTH}/mfa/totp/setup`)
          .set(...bearer(squatter.accessToken))
          .then((r) => r);
      const first = await setup();
      expect(first.status).toBe(200);
      midStep(t);
      // One confirmation has checked its code against the pending secret; a second setup is about to store a new one.
      const cipher = t.app.get(SecretCipher);
      const realDecrypt = cipher.decrypt.bind(cipher);
      const checked = gate();
      jest.spyOn(cipher, 'decrypt').mockImplementationOnce(async (ciphertext, context) => {
        const secret = await realDecrypt(ciphertext, context);
        checked.reached();
        await checked.opened;
        return secret;
      });
      const credentials = t.app.get(MfaCredentialRepository);
      const realSave = credentials.savePendingTotp.bind(credentials);
      const storing = gate();
      jest.spyOn(credentials, 'savePendingTotp').mockImplementationOnce(async (credential) => {
        storing.reached();
        await storing.opened;
        return realSave(credential);
      });
      const secondSetup = setup();
      await storing.arrived;
      const confirming = t
        .api()
        .post(`${AUTH}/mfa/totp/confirm`)
        .set(...bearer(squatter.accessToken))
        .send({ code: code(t, first.body.secret) })
        .then((r) => r);
      await checked.arrived;
      await takeOver(squatter.id);
      storing.release();
      await secondSetup;
      checked.release();
      const confirmed = await confirming;
      // The account the victim just claimed holds no second factor of the squatter's.
      const enabled: unknown[] = await t.dataSource.query(
        `SELECT 1 FROM totp_credentials WHERE user_id = $1 AND confirmed_at IS NOT NULL`,
        [squatter.id],
      );
      expect({ confirm: confirmed.status, totpEnabled: enabled.length }).toEqual({ confirm: 401, totpEnabled: 0 });
    });

    it('does not keep recovery codes the squatter had issued while the takeover ran', async () => {
      const squatter = await userWithTotp(t);
      const hasher = t.app.get(PasswordHasher);
      const realVerify = hasher.verify.bind(hasher);
      const g = gate();
      jest.spyOn(hasher, 'verify').mockImplementationOnce(async (password, hash) => {
        const matched = await realVerify(password, hash);
        g.reached();
        await g.opened;
        return matched;
      });
      const pending = t
        .api()
        .post(`${AUTH}/mfa/recovery-codes`)
        .set(...bearer(squatter.accessToken))
        .send({ password: PASSWORD })
        .then((r) => r);
      await g.arrived;
      await takeOver(squatter.id);
      g.release();
      const res = await pending;
      const codes: unknown[] = await t.dataSource.query(`SELECT 1 FROM recovery_codes WHERE user_id = $1`, [squatter.id]);
      expect({ status: res.status, codes: codes.length }).toEqual({ status: 401, codes: 0 });
    });

    it('does not let a squatter set a new password from a request that passed authentication before the takeover', async () => {
      const squatter = await signedInUser(t);
      const hasher = t.app.get(PasswordHasher);
      const realVerify = hasher.verify.bind(hasher);
      const g = gate();
      jest.spyOn(hasher, 'verify').mockImplementationOnce(async (password, hash) => {
        const matched = await realVerify(password, hash);
        g.reached();
        await g.opened;
        return matched;
      });
      const newPassword = 'squatter keeps a brand new passphrase 42';
      const pending = t
        .api()
        .post(`${AUTH}/password/change`)
        .set(...bearer(squatter.accessToken))
        .send({ currentPassword: PASSWORD, newPassword })
        .then((r) => r);
      await g.arrived;
      await takeOver(squatter.id);
      g.release();
      await pending;
      // After the takeover the account has no password the squatter knows.
      expect((await login(t, squatter.email, newPassword)).status).toBe(401);
    });
  });
});
