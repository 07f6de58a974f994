import { createHash, randomBytes } from 'node:crypto';
import type { TestApp } from './test-app';

export const EMAIL_CODE = '/api/v1/auth/email-code';

/** A PKCE pair as a browser makes it: a 43-character verifier and its S256 challenge. */
export function pkcePair(): { codeVerifier: string; codeChallenge: string } {
  const codeVerifier = randomBytes(32).toString('base64url');
  return { codeVerifier, codeChallenge: createHash('sha256').update(codeVerifier).digest('base64url') };
}

/** The account console's page for the link: always an allowed return URL. */
export function consoleReturnTo(t: TestApp): string {
  return `${t.config.apiUrl}/account/email-link`;
}

function withRealm<R extends { set(name: string, value: string): R }>(req: R, realm?: string): R {
  return realm ? req.set('X-Realm-Id', realm) : req;
}

export function requestCode(t: TestApp, body: Record<string, unknown>, realm?: string) {
  return withRealm(t.api().post(EMAIL_CODE), realm).send(body);
}

export function verifyCode(t: TestApp, body: Record<string, unknown>, realm?: string) {
  return withRealm(t.api().post(`${EMAIL_CODE}/verify`), realm).send(body);
}

export interface SignInMail {
  code: string;
  token: string | null;
  link: string | null;
  text: string;
}

/** The sign-in emails queued for an address, oldest first, with their code and link token. */
export async function signInMails(t: TestApp, email: string): Promise<SignInMail[]> {
  const rows: { text_body: string }[] = await t.dataSource.query(
    `SELECT text_body FROM email_outbox WHERE recipient = $1 AND subject LIKE 'Your sign-in code%' ORDER BY created_at, id`,
    [email.toLowerCase()],
  );
  return rows.map(({ text_body: text }) => parseSignInMail(text));
}

export function parseSignInMail(text: string): SignInMail {
  const code = /sign-in code is (\d{4}) (\d{4})/.exec(text);
  if (!code) throw new Error(`no code in: ${text}`);
  const link = /(https?:\/\/\S*[?&]email_token=([A-Za-z0-9_-]+)\S*)/.exec(text);
  return { code: code[1] + code[2], token: link ? link[2] : null, link: link ? link[1] : null, text };
}

/** Waits for the sending that POST /email-code does after answering. */
export async function mailCount(t: TestApp, email: string, count: number, timeoutMs = 5000): Promise<SignInMail[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const mails = await signInMails(t, email);
    if (mails.length >= count || Date.now() > deadline) return mails;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Asks for a code (and a link when `link` is set) and returns the newest email once it is queued. */
export async function codeFor(t: TestApp, email: string, options: { link?: { codeChallenge: string }; realm?: string } = {}) {
  const before = (await signInMails(t, email)).length;
  const res = await requestCode(
    t,
    { email, ...(options.link ? { returnTo: consoleReturnTo(t), codeChallenge: options.link.codeChallenge } : {}) },
    options.realm,
  );
  if (res.status !== 202) throw new Error(`email-code failed: ${res.status} ${JSON.stringify(res.body)}`);
  const mails = await mailCount(t, email, before + 1);
  if (mails.length <= before) throw new Error(`no sign-in email to ${email}`);
  return mails[mails.length - 1];
}

/** A code that is not `code`. */
export function wrongCode(code: string, n = 1): string {
  return String((Number(code) + n) % 100_000_000).padStart(8, '0');
}
