import { aUser } from '../../builders/user.builder';
import { authFixture } from './auth-fixture';

const PASSWORD = 'correct horse battery staple';
const request = (proof: string | null) => ({ proof, method: 'POST', path: '/api/v1/auth/refresh' });

/** A session bound at login to the fake key "key-a". */
async function boundSession() {
  const user = aUser();
  const f = authFixture([user]);
  const result = await f.login.execute({
    realm: f.realm,
    email: user.email,
    password: PASSWORD,
    client: f.client,
    dpop: { proof: 'key-a:login-1', method: 'POST', path: '/api/v1/auth/login' },
  });
  if (result.kind !== 'authenticated') throw new Error('expected tokens');
  return { f, user, refreshToken: result.tokens.refreshToken, sessionId: result.sessionId, tokens: result.tokens };
}

describe('sender-constrained sessions (DPoP)', () => {
  it('binds a session opened with a proof to the proof’s key, and issues DPoP tokens', async () => {
    const { f, sessionId, tokens } = await boundSession();
    expect(f.sessions.rows.get(sessionId)?.dpopJkt).toBe('key-a');
    expect(tokens.tokenType).toBe('DPoP');
  });

  it('refuses a login whose proof is invalid, before anything is written', async () => {
    const user = aUser();
    const f = authFixture([user]);
    const dpop = { proof: 'not a proof', method: 'POST', path: '/api/v1/auth/login' };
    await expect(f.login.execute({ realm: f.realm, email: user.email, password: PASSWORD, client: f.client, dpop })).rejects.toMatchObject({
      code: 'INVALID_DPOP_PROOF',
    });
    expect(f.sessions.rows.size).toBe(0);
  });

  it.each([
    ['missing', null],
    ['other_key', 'key-b:r1'],
    ['malformed', 'garbage'],
  ])('refuses a refresh without a good proof (%s): the token is not spent and the refusal is audited', async (reason, proof) => {
    const { f, refreshToken, sessionId } = await boundSession();
    await expect(f.refresh.execute({ realm: f.realm, refreshToken, client: f.client, dpop: request(proof) })).rejects.toMatchObject({
      code: 'INVALID_DPOP_PROOF',
    });
    expect([...f.refreshTokens.rows.values()].filter((t) => t.rotatedAt)).toHaveLength(0);
    expect(f.audit.entries.filter((e) => e.type === 'dpop.refused')).toEqual([
      expect.objectContaining({ sessionId, details: { action: 'refresh', reason } }),
    ]);
    // The owner goes on.
    const { tokens } = await f.refresh.execute({ realm: f.realm, refreshToken, client: f.client, dpop: request('key-a:r2') });
    expect(tokens.tokenType).toBe('DPoP');
  });

  it('refuses a replayed proof even with the right key', async () => {
    const { f, refreshToken } = await boundSession();
    const first = await f.refresh.execute({ realm: f.realm, refreshToken, client: f.client, dpop: request('key-a:same') });
    await expect(
      f.refresh.execute({ realm: f.realm, refreshToken: first.tokens.refreshToken, client: f.client, dpop: request('key-a:same') }),
    ).rejects.toMatchObject({ code: 'INVALID_DPOP_PROOF' });
  });

  it('leaves an unbound session alone: Bearer tokens, no proof needed', async () => {
    const user = aUser();
    const f = authFixture([user]);
    const result = await f.login.execute({ realm: f.realm, email: user.email, password: PASSWORD, client: f.client });
    if (result.kind !== 'authenticated') throw new Error('expected tokens');
    expect(result.tokens.tokenType).toBe('Bearer');
    const { tokens } = await f.refresh.execute({ realm: f.realm, refreshToken: result.tokens.refreshToken, client: f.client });
    expect(tokens.tokenType).toBe('Bearer');
  });
});
