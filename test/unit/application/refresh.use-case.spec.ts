import { aUser } from '../../builders/user.builder';
import { authFixture } from './auth-fixture';

const PASSWORD = 'correct horse battery staple';

async function signedIn() {
  const user = aUser();
  const f = authFixture([user]);
  const result = await f.login.execute({ realm: f.realm, email: user.email, password: PASSWORD, client: f.client });
  if (result.kind !== 'authenticated') throw new Error('expected tokens');
  return { f, user, refreshToken: result.tokens.refreshToken, sessionId: result.sessionId };
}

describe('RefreshUseCase', () => {
  it('rotates the token: a new refresh token, the old one marked rotated', async () => {
    const { f, refreshToken } = await signedIn();
    const { tokens } = await f.refresh.execute({ realm: f.realm, refreshToken, client: f.client });
    expect(tokens.refreshToken).not.toBe(refreshToken);
    expect([...f.refreshTokens.rows.values()].filter((t) => !t.rotatedAt)).toHaveLength(1);
  });

  it("ignores a resolved context that is not the presented token's: the other session is neither rotated nor answered", async () => {
    const { f, refreshToken: mine } = await signedIn();
    const other = await signedIn();
    const theirs = await f.resolver.resolve(f.realm, mine);
    // The token presented is another one (unknown here); the context belongs to `mine`.
    await expect(
      f.refresh.execute({ realm: f.realm, refreshToken: other.refreshToken, client: f.client, known: theirs }),
    ).rejects.toMatchObject({
      code: 'INVALID_TOKEN',
    });
    expect([...f.refreshTokens.rows.values()].filter((t) => t.rotatedAt)).toHaveLength(0);
    // `mine` still rotates once, normally.
    const { tokens } = await f.refresh.execute({ realm: f.realm, refreshToken: mine, client: f.client });
    expect(tokens.refreshToken).not.toBe(mine);
  });

  it('answers the same successor within the leeway', async () => {
    const { f, refreshToken } = await signedIn();
    const first = await f.refresh.execute({ realm: f.realm, refreshToken, client: f.client });
    f.clock.advance(10);
    const second = await f.refresh.execute({ realm: f.realm, refreshToken, client: f.client });
    expect(second.tokens.refreshToken).toBe(first.tokens.refreshToken);
  });

  it('revokes the session when a rotated token comes back after the leeway', async () => {
    const { f, refreshToken, sessionId } = await signedIn();
    const first = await f.refresh.execute({ realm: f.realm, refreshToken, client: f.client });
    f.clock.advance(11);
    await expect(f.refresh.execute({ realm: f.realm, refreshToken, client: f.client })).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    expect(f.sessions.rows.get(sessionId)?.revokedAt).not.toBeNull();
    expect(f.audit.types()).toContain('refresh.reused');
    await expect(f.refresh.execute({ realm: f.realm, refreshToken: first.tokens.refreshToken, client: f.client })).rejects.toMatchObject({
      code: 'INVALID_TOKEN',
    });
  });

  it('refuses a token once its user is suspended', async () => {
    const { f, user, refreshToken } = await signedIn();
    const stored = await f.userRepo.findById('default', user.id);
    stored!.suspend(f.clock.now());
    await f.userRepo.save(stored!);
    await expect(f.refresh.execute({ realm: f.realm, refreshToken, client: f.client })).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
  });

  it('stops at the absolute session lifetime even when used constantly', async () => {
    const { f, refreshToken: initial } = await signedIn();
    let refreshToken = initial;
    const step = 6 * 86400;
    for (let elapsed = step; elapsed < f.config.sessionMaxLifetimeSeconds; elapsed += step) {
      f.clock.advance(step);
      refreshToken = (await f.refresh.execute({ realm: f.realm, refreshToken, client: f.client })).tokens.refreshToken;
    }
    f.clock.advance(step);
    await expect(f.refresh.execute({ realm: f.realm, refreshToken, client: f.client })).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
  });
});
