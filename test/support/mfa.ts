import { execFileSync, spawnSync } from 'node:child_process';
import * as OTPAuth from 'otpauth';
import speakeasy from 'speakeasy';
import type { TestApp } from './test-app';
import { bearer, login, PASSWORD, register, uniqueEmail } from './flows';
import { SoftAuthenticator } from './soft-authenticator';

/** A TOTP code for `secret` at `at` (default: the app's clock), from speakeasy. */
export function totpAt(secret: string, at: Date): string {
  return speakeasy.totp({ secret, encoding: 'base32', time: Math.floor(at.getTime() / 1000) });
}

let oathtoolInstalled: boolean | undefined;

/**
 * A TOTP code from an implementation of RFC 6238 independent of the service's (speakeasy), as an
 * authenticator app would make it: Debian's `oathtool` where it is installed (CI installs it),
 * otherwise the `otpauth` package, so `npm test` also passes on a machine without it.
 */
export function oathtoolTotp(secret: string, at: Date): string {
  oathtoolInstalled ??= spawnSync('oathtool', ['--version'], { stdio: 'ignore' }).status === 0;
  if (oathtoolInstalled) {
    return execFileSync('oathtool', ['--totp', '--base32', `--now=@${Math.floor(at.getTime() / 1000)}`, secret], {
      encoding: 'utf8',
    }).trim();
  }
  const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 });
  return totp.generate({ timestamp: at.getTime() });
}

/** Moves the app's clock to the middle of a 30-second step, so a code made now is still current when checked. */
export function midStep(t: TestApp): void {
  const intoStep = t.clock.now().getTime() % 30_000;
  t.clock.advance(((15_000 - intoStep + 30_000) % 30_000) / 1000);
}

/** Moves the app's clock to the middle of the next step (a fresh TOTP code). */
export function nextStep(t: TestApp): void {
  const now = t.clock.now().getTime();
  t.clock.advance((Math.floor(now / 30_000) * 30_000 + 45_000 - now) / 1000);
}

export function code(t: TestApp, secret: string, offsetSeconds = 0): string {
  return totpAt(secret, new Date(t.clock.now().getTime() + offsetSeconds * 1000));
}

/** Registers (with `email`, else a unique one), signs in, sets up and confirms TOTP. */
export async function userWithTotp(t: TestApp, email = uniqueEmail('mfa')) {
  const user = await register(t, email);
  const signedIn = await login(t, user.email);
  const accessToken = signedIn.body.tokens.accessToken as string;
  const setup = await t
    .api()
    .post('/api/v1/auth/mfa/totp/setup')
    .set(...bearer(accessToken));
  if (setup.status !== 200) throw new Error(`setup failed: ${setup.status} ${JSON.stringify(setup.body)}`);
  const secret = setup.body.secret as string;
  midStep(t);
  const confirm = await t
    .api()
    .post('/api/v1/auth/mfa/totp/confirm')
    .set(...bearer(accessToken))
    .send({ code: code(t, secret) });
  if (confirm.status !== 200) throw new Error(`confirm failed: ${confirm.status} ${JSON.stringify(confirm.body)}`);
  // The confirming code's step is used up: later logins need the next one.
  nextStep(t);
  return { ...user, accessToken, secret, recoveryCodes: confirm.body.recoveryCodes as string[] };
}

/** Registers a WebAuthn credential made by a software authenticator for a signed-in user. */
export async function addSoftKey(t: TestApp, accessToken: string, name?: string, authenticator = new SoftAuthenticator()) {
  const options = await t
    .api()
    .post('/api/v1/auth/mfa/webauthn/register/options')
    .set(...bearer(accessToken))
    .send(name ? { name } : {});
  if (options.status !== 200) throw new Error(`register options failed: ${options.status} ${JSON.stringify(options.body)}`);
  const verify = await t
    .api()
    .post('/api/v1/auth/mfa/webauthn/register/verify')
    .set(...bearer(accessToken))
    .send({ response: authenticator.attestation(options.body) });
  if (verify.status !== 200) throw new Error(`register verify failed: ${verify.status} ${JSON.stringify(verify.body)}`);
  return { authenticator, body: verify.body };
}

/** Registers and signs in a user, then enrols a software security key. */
export async function userWithSoftKey(t: TestApp) {
  const user = await register(t, uniqueEmail('key'));
  const signedIn = await login(t, user.email);
  const accessToken = signedIn.body.tokens.accessToken as string;
  const { authenticator, body } = await addSoftKey(t, accessToken, 'Test key');
  return { ...user, accessToken, authenticator, recoveryCodes: body.recoveryCodes as string[], credentialId: body.credential.id as string };
}

/** Password step of a login with MFA: returns the mfaToken. */
export async function mfaToken(t: TestApp, email: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await login(t, email, PASSWORD, extra);
  if (res.status !== 200 || !res.body.mfaToken) throw new Error(`login did not ask for MFA: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.mfaToken as string;
}

export function verify(t: TestApp, body: Record<string, unknown>) {
  return t.api().post('/api/v1/auth/mfa/verify').send(body);
}

/** Asks for WebAuthn options for an mfaToken and answers them with the authenticator. */
export async function webauthnAnswer(
  t: TestApp,
  token: string,
  authenticator: SoftAuthenticator,
  tamper: Parameters<SoftAuthenticator['assertion']>[1] = {},
) {
  const options = await t.api().post('/api/v1/auth/mfa/webauthn/options').send({ mfaToken: token });
  if (options.status !== 200) throw new Error(`webauthn options failed: ${options.status} ${JSON.stringify(options.body)}`);
  return { options: options.body, assertion: authenticator.assertion(options.body, tamper) };
}

export function decodeJwt(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
}

export async function auditEvents(
  t: TestApp,
  userId: string,
  type?: string,
): Promise<{ type: string; details: Record<string, unknown> }[]> {
  const rows: { type: string; details: Record<string, unknown> }[] = await t.dataSource.query(
    `SELECT type, details FROM audit_events WHERE user_id = $1 ${type ? 'AND type = $2' : ''} ORDER BY at, id`,
    type ? [userId, type] : [userId],
  );
  return rows;
}
