import { DomainError } from '../../../src/domain/errors';
import { aUser } from '../../builders/user.builder';
import { authFixture } from './auth-fixture';

const PASSWORD = 'correct horse battery staple';

/** The place a realm's own rules join every sign-in and every access token (SignInHooks). */
describe('sign-in hooks in the sign-in pipeline and the token issuer', () => {
  const login = (f: ReturnType<typeof authFixture>, email: string) =>
    f.login.execute({ realm: f.realm, email, password: PASSWORD, client: f.client });

  it('without hooks: asked once per sign-in and per token, tokens carry only their own claims', async () => {
    const user = aUser();
    const f = authFixture([user]);
    const result = await login(f, user.email);
    if (result.kind !== 'authenticated') throw new Error('expected tokens');
    expect(f.hooks.attempts).toEqual([
      expect.objectContaining({ user: expect.objectContaining({ id: user.id }), method: 'password', amr: ['pwd'] }),
    ]);
    expect(f.hooks.tokenRequests).toHaveLength(1);
    expect(Object.keys(JSON.parse(result.tokens.accessToken)).sort()).toEqual(['amr', 'exp', 'iat', 'jti', 'realm', 'roles', 'sid', 'sub']);
  });

  it('a refusal stops the sign-in before any session is written, and the refusal reaches the caller', async () => {
    const user = aUser();
    const f = authFixture([user]);
    f.hooks.decide = async () => {
      throw new DomainError('FORBIDDEN', 'Your contract has ended');
    };
    await expect(login(f, user.email)).rejects.toMatchObject({ code: 'FORBIDDEN', message: 'Your contract has ended' });
    expect(f.sessions.rows.size).toBe(0);
    expect(f.refreshTokens.rows.size).toBe(0);
  });

  it('claims join the access token at sign-in and at refresh, and never replace the token’s own', async () => {
    const user = aUser();
    const f = authFixture([user]);
    f.hooks.claims = async () => ({ plan: 'gold', sub: 'someone-else', realm: 'other', roles: ['super-admin'] });
    const result = await login(f, user.email);
    if (result.kind !== 'authenticated') throw new Error('expected tokens');
    const claims = JSON.parse(result.tokens.accessToken);
    expect(claims).toMatchObject({ plan: 'gold', sub: user.id, realm: 'default', roles: [] });
    const refreshed = await f.refresh.execute({ realm: f.realm, refreshToken: result.tokens.refreshToken, client: f.client });
    expect(JSON.parse(refreshed.tokens.accessToken)).toMatchObject({ plan: 'gold', sub: user.id, sid: result.sessionId });
  });
});
