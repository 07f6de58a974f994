import { randomUUID } from 'node:crypto';
import * as oidc from 'openid-client';
import { OpClients } from '../../src/application/ports/op-clients';
import { OrganizationRepository } from '../../src/application/ports/organization.repository';
import { Transaction } from '../../src/application/ports/transaction';
import { OrganizationSignIn } from '../../src/application/organizations/organization-sign-in';
import { Organization } from '../../src/domain/organization/organization';
import { aClient, InMemoryOpClients, TEST_REDIRECT } from '../fakes/in-memory-op-clients';
import { mailCount, requestCode, signInMails } from '../support/email-codes';
import { register, uniqueEmail } from '../support/flows';
import { code as totpCode, userWithTotp } from '../support/mfa';
import { authorizationRequest, AuthorizationRequest, Browser, listening, Page } from '../support/op-browser';
import { verifyAddress } from '../support/organizations';
import { createTestApp, TestApp } from '../support/test-app';

const EMAIL_CODE_FORM = /\/email-code$/;

/** The provider's sign-in page with a code sent by email: the same use cases, counters and refusals as POST /email-code(/verify). */
describe('the OpenID provider’s sign-in page: email code', () => {
  let t: TestApp;
  let origin: string;
  let config: oidc.Configuration;

  beforeAll(async () => {
    t = await createTestApp({ override: (builder) => builder.overrideProvider(OpClients).useValue(new InMemoryOpClients()) });
    origin = await listening(t);
    const registered = aClient({ firstParty: true });
    (t.app.get(OpClients) as InMemoryOpClients).register('default', registered);
    config = await oidc.discovery(new URL(`${origin}/realms/default`), registered.clientId, undefined, oidc.None(), {
      execute: [oidc.allowInsecureRequests],
    });
  });
  afterAll(() => t?.close());

  /** A fresh browser at the sign-in page of a fresh authorization request. */
  async function start(): Promise<{ browser: Browser; request: AuthorizationRequest; page: Page }> {
    const browser = new Browser(origin);
    const request = await authorizationRequest(config, { redirect_uri: TEST_REDIRECT, scope: 'openid email' });
    const page = await browser.open(request.url.href);
    expect(page.status).toBe(200);
    return { browser, request, page };
  }

  /** "Email me a code" for `email`, and the code that was mailed (when one was). */
  async function askCode(browser: Browser, page: Page, email: string, expectMail = true) {
    const before = (await signInMails(t, email)).length;
    const sent = await browser.submit(page, { email }, { action: EMAIL_CODE_FORM });
    if (!expectMail) return { sent, code: null };
    const mails = await mailCount(t, email, before + 1);
    expect(mails.length).toBe(before + 1);
    return { sent, code: mails.at(-1)!.code };
  }

  function tokensFor(page: Page, request: AuthorizationRequest) {
    expect(page.location).toMatch(/^https:\/\/app\.example\.test\/callback\?/);
    return oidc.authorizationCodeGrant(config, new URL(page.location!), {
      pkceCodeVerifier: request.verifier,
      expectedState: request.state,
      expectedNonce: request.nonce,
    });
  }

  it('signs in with the emailed code typed on the page; a wrong code is shown on the page; openid-client gets amr ["email"]', async () => {
    const person = await register(t, uniqueEmail('op-code'));
    await verifyAddress(t, person.email);
    const { browser, request, page } = await start();
    expect(page.html).toContain('Email me a code');
    const { sent, code } = await askCode(browser, page, person.email);
    expect(sent.status).toBe(200);
    expect(sent.html).toMatch(/name="code"/);
    expect(sent.headers.get('content-security-policy')).toContain("script-src 'self'");

    const wrong = await browser.submit(sent, { code: code === '00000000' ? '11111111' : '00000000' }, { action: /email-code-verify$/ });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('content-type')).toMatch(/text\/html/);
    expect(wrong.html).toContain('That code is not valid or has expired.');
    expect(wrong.location).toBeNull();

    const done = await browser.submit(wrong, { code: code! }, { action: /email-code-verify$/ });
    const tokens = await tokensFor(done, request);
    expect(tokens.claims()).toMatchObject({ sub: person.id, amr: ['email'] });
    // The code is spent: the API refuses it now.
    const again = await t.api().post('/api/v1/auth/email-code/verify').send({ email: person.email, code });
    expect(again.status).toBe(401);
  });

  it('answers an address without an account with the same page as a known one (no enumeration)', async () => {
    const known = await register(t, uniqueEmail('op-known'));
    const unknown = uniqueEmail('op-unknown');
    const a = await start();
    const b = await start();
    const knownPage = (await askCode(a.browser, a.page, known.email)).sent;
    const unknownPage = (await askCode(b.browser, b.page, unknown, false)).sent;
    const normalised = (page: Page, email: string) =>
      page.html
        .replaceAll(email, 'EMAIL')
        .replace(/\/interaction\/[^/"]+\//g, '/interaction/UID/')
        .replace(/name="csrf" value="[^"]*"/g, 'name="csrf" value="CSRF"');
    expect([unknownPage.status, normalised(unknownPage, unknown)]).toEqual([knownPage.status, normalised(knownPage, known.email)]);
  });

  it('signs a user with MFA in through the second-factor page after the code (amr ["email", "otp"])', async () => {
    const person = await userWithTotp(t, uniqueEmail('op-code-mfa'));
    // Verified, so the code signs in to the account as it is (an unverified one would be taken over, its factors gone).
    await t.dataSource.query('UPDATE users SET email_verified = true WHERE id = $1', [person.id]);
    const { browser, request, page } = await start();
    const { sent, code } = await askCode(browser, page, person.email);
    const second = await browser.submit(sent, { code: code! }, { action: /email-code-verify$/ });
    expect(second.location).toBeNull();
    expect(second.html).toContain('Enter the code from your authenticator app');
    const done = await browser.submit(second, { code: totpCode(t, person.secret) });
    expect((await tokensFor(done, request)).claims()!.amr).toEqual(['email', 'otp']);
  });

  it('refuses a form without its CSRF token', async () => {
    const { browser, page } = await start();
    const forged = await browser.submit(page, { email: uniqueEmail('op-csrf') }, { action: EMAIL_CODE_FORM, omitCsrf: true });
    expect(forged.status).toBe(403);
  });

  it('ORG-03 shows SSO_REQUIRED on the page for an address of an organization that requires its provider', async () => {
    const domain = `op-code-${randomUUID().slice(0, 8)}.example`;
    const known = await register(t, `known@${domain}`);
    await verifyAddress(t, known.email);
    const organization = Organization.create({
      id: randomUUID(),
      realmId: 'default',
      name: 'Code Corp',
      slug: `code-corp-${randomUUID().slice(0, 6)}`,
      domains: [domain],
      identityProvider: 'corp',
      requireIdentityProvider: true,
      createdAt: t.clock.now(),
    });
    await t.app.get(Transaction).run(() => t.app.get(OrganizationRepository).insert(organization));
    // Stored directly, round the admin API: the realm's kept list of enforced domains is read again.
    t.app.get(OrganizationSignIn).forget('default');
    const { browser, page } = await start();
    const { sent, code } = await askCode(browser, page, known.email);
    const refused = await browser.submit(sent, { code: code! }, { action: /email-code-verify$/ });
    expect(refused.status).toBe(403);
    expect(refused.location).toBeNull();
    expect(refused.html).toContain('its own identity provider');
  });
});

describe('the OpenID provider’s email code and the limits of POST /email-code', () => {
  let t: TestApp;
  let origin: string;

  beforeAll(async () => {
    t = await createTestApp({
      env: { RATE_LIMIT_EMAIL_CODE: '2/900', RATE_LIMIT_SIGN_IN_VERIFY: '3/60' },
      override: (builder) => builder.overrideProvider(OpClients).useValue(new InMemoryOpClients()),
    });
    origin = await listening(t);
  });
  afterAll(() => t?.close());

  it('counts against the per-address limit of POST /email-code and the per-IP limit of its verify, the same counters, and says so on the page', async () => {
    const registered = aClient({ firstParty: true });
    (t.app.get(OpClients) as InMemoryOpClients).register('default', registered);
    const config = await oidc.discovery(new URL(`${origin}/realms/default`), registered.clientId, undefined, oidc.None(), {
      execute: [oidc.allowInsecureRequests],
    });
    const email = uniqueEmail('op-code-limit');
    const browser = new Browser(origin);
    const request = await authorizationRequest(config, { redirect_uri: TEST_REDIRECT, scope: 'openid' });
    const page = await browser.open(request.url.href);
    // One request by the API, one by the page: the third, by either, is over the address's limit.
    expect((await requestCode(t, { email })).status).toBe(202);
    const sent = await browser.submit(page, { email }, { action: EMAIL_CODE_FORM });
    expect(sent.status).toBe(200);
    expect((await requestCode(t, { email: email.toUpperCase() })).status).toBe(429);
    const restarted = await browser.submit(sent, {}, { action: /email-code-restart$/ });
    expect(restarted.html).toContain('Email me a code');
    const limited = await browser.submit(restarted, { email }, { action: EMAIL_CODE_FORM });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(limited.html).toContain('Too many attempts');

    // Wrong codes: the API's verify and the page share the per-IP counter.
    const again = await browser.submit(
      await browser.submit(limited, { email: uniqueEmail('op-code-limit-2') }, { action: EMAIL_CODE_FORM }),
      {},
      { action: /email-code-restart$/ },
    );
    expect(again.status).toBe(200);
    const other = uniqueEmail('op-code-limit-3');
    const codePage = await browser.submit(again, { email: other }, { action: EMAIL_CODE_FORM });
    expect((await t.api().post('/api/v1/auth/email-code/verify').send({ email: other, code: '00000000' })).status).toBe(401);
    expect((await browser.submit(codePage, { code: '00000000' }, { action: /email-code-verify$/ })).status).toBe(401);
    expect((await browser.submit(codePage, { code: '00000000' }, { action: /email-code-verify$/ })).status).toBe(401);
    const blocked = await browser.submit(codePage, { code: '00000000' }, { action: /email-code-verify$/ });
    expect(blocked.status).toBe(429);
    expect(blocked.html).toContain('Too many attempts');
  });
});
