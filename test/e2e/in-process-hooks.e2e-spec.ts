import { Injectable } from '@nestjs/common';
import { RegistrationAttempt, SignInAttempt, SignInHooks, TokenRequest } from '../../src/application/ports/sign-in-hooks';
import { DomainError } from '../../src/domain/errors';
import { login, PASSWORD, register, uniqueEmail } from '../support/flows';
import { createTestApp, TestApp } from '../support/test-app';

/**
 * The in-process alternative to HTTP hooks (docs/extending.md): a team binds its own
 * `SignInHooks` class, and every sign-up, sign-in and access token goes through it.
 */
@Injectable()
class CompanyRules extends SignInHooks {
  readonly seen: string[] = [];

  beforeRegistration(attempt: RegistrationAttempt): Promise<void> | null {
    this.seen.push(`register:${attempt.email}`);
    if (!attempt.email.endsWith('@example.com')) {
      return Promise.reject(new DomainError('HOOK_DENIED', 'Only example.com addresses may sign up'));
    }
    return null; // nothing to wait for
  }

  beforeSignIn(attempt: SignInAttempt): Promise<void> | null {
    this.seen.push(`sign-in:${attempt.method}`);
    return attempt.user.profile.firstName === 'Blocked' ? Promise.reject(new DomainError('HOOK_DENIED', 'Ask your manager')) : null;
  }

  tokenClaims(request: TokenRequest): Promise<Record<string, unknown> | null> | null {
    this.seen.push('token');
    return Promise.resolve({ tenant: request.realm.id });
  }
}

describe('an in-process SignInHooks class bound instead of the HTTP hooks', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ override: (builder) => builder.overrideProvider(SignInHooks).useClass(CompanyRules) });
  });
  afterAll(() => t?.close());

  it('decides sign-ups and sign-ins and adds claims, without any hook configured', async () => {
    const rules = t.app.get(SignInHooks) as CompanyRules;
    expect(rules).toBeInstanceOf(CompanyRules);

    const refused = await t.api().post('/api/v1/auth/register').send({ email: 'eve@example.org', password: PASSWORD, name: 'Eve Adams' });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'HOOK_DENIED', message: 'Only example.com addresses may sign up' });

    const user = await register(t, uniqueEmail('inproc'));
    const res = await login(t, user.email, PASSWORD);
    expect(res.status).toBe(200);
    const claims = JSON.parse(Buffer.from(res.body.tokens.accessToken.split('.')[1], 'base64url').toString());
    expect(claims.tenant).toBe('default');
    expect(rules.seen).toEqual(['register:eve@example.org', `register:${user.email}`, 'sign-in:password', 'token']);

    const blocked = await t
      .api()
      .post('/api/v1/auth/register')
      .send({ email: uniqueEmail('blocked'), password: PASSWORD, name: 'Blocked User' });
    expect(blocked.status).toBe(201);
    const denied = await login(t, blocked.body.user.email, PASSWORD);
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({ code: 'HOOK_DENIED', message: 'Ask your manager' });
  });
});
