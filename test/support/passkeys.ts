import type { TestApp } from './test-app';
import { bearer } from './flows';
import { SoftAuthenticator } from './soft-authenticator';

export const AUTH = '/api/v1/auth';

/** Registers a passkey (resident, user-verified) made by a software authenticator for a signed-in user. */
export async function addPasskey(t: TestApp, accessToken: string, authenticator = new SoftAuthenticator(), realm?: string) {
  authenticator.resident = true;
  const withRealm = <R extends { set(name: string, value: string): R }>(r: R): R => (realm ? r.set('X-Realm-Id', realm) : r);
  const options = await withRealm(t.api().post(`${AUTH}/mfa/webauthn/register/options`))
    .set(...bearer(accessToken))
    .send({ passkey: true });
  if (options.status !== 200) throw new Error(`passkey options failed: ${options.status} ${JSON.stringify(options.body)}`);
  const verify = await withRealm(t.api().post(`${AUTH}/mfa/webauthn/register/verify`))
    .set(...bearer(accessToken))
    .send({ response: authenticator.attestation(options.body) });
  if (verify.status !== 200) throw new Error(`passkey verify failed: ${verify.status} ${JSON.stringify(verify.body)}`);
  return { authenticator, options: options.body, body: verify.body };
}

/** A passkey challenge: `{challengeId, options}`. */
export async function passkeyOptions(
  t: TestApp,
  realm?: string,
): Promise<{ challengeId: string; options: { challenge: string } & Record<string, unknown> }> {
  const req = t.api().post(`${AUTH}/passkeys/options`);
  const res = await (realm ? req.set('X-Realm-Id', realm) : req).send({});
  if (res.status !== 200) throw new Error(`passkey options failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export function passkeyVerify(t: TestApp, body: Record<string, unknown>, realm?: string) {
  const req = t.api().post(`${AUTH}/passkeys/verify`);
  return (realm ? req.set('X-Realm-Id', realm) : req).send(body);
}

/** Signs in with the authenticator's passkey: a fresh challenge, answered. */
export async function passkeySignIn(
  t: TestApp,
  authenticator: SoftAuthenticator,
  tamper: Parameters<SoftAuthenticator['assertion']>[1] = {},
  realm?: string,
) {
  const { challengeId, options } = await passkeyOptions(t, realm);
  return passkeyVerify(t, { challengeId, response: authenticator.assertion(options, tamper) }, realm);
}
