import { AdminActor } from '../../../src/application/admin/admin-actor';
import { CompleteFederationUseCase } from '../../../src/application/federation/complete-federation.use-case';
import { CreateIdentityProviderUseCase } from '../../../src/application/federation/create-identity-provider.use-case';
import { DeleteIdentityProviderUseCase } from '../../../src/application/federation/delete-identity-provider.use-case';
import { ExchangeLoginCodeUseCase } from '../../../src/application/federation/exchange-login-code.use-case';
import { federationRedirectUri } from '../../../src/application/federation/federation-flow';
import { LinkIdentityUseCase } from '../../../src/application/federation/link-identity.use-case';
import { ListIdentityProvidersUseCase } from '../../../src/application/federation/list-identity-providers.use-case';
import { ListUserIdentitiesUseCase } from '../../../src/application/federation/list-user-identities.use-case';
import { StartFederationUseCase } from '../../../src/application/federation/start-federation.use-case';
import { UnlinkIdentityUseCase } from '../../../src/application/federation/unlink-identity.use-case';
import { UpdateIdentityProviderUseCase } from '../../../src/application/federation/update-identity-provider.use-case';
import { ProviderClaims } from '../../../src/application/ports/identity-provider-client';
import { IdentityProvider } from '../../../src/domain/federation/identity-provider';
import { LinkedIdentity } from '../../../src/domain/federation/linked-identity';
import { User, UserState } from '../../../src/domain/user/user';
import { aUser } from '../../builders/user.builder';
import { aPasskey } from '../../builders/webauthn-credential.builder';
import { useCaseFixture } from './fixture';

const ISSUER = 'https://idp.example.com';
const VERIFIER = 'v'.repeat(43);
const admin: AdminActor = { id: 'admin-1', realmId: 'default', superAdmin: false, hidesSuperAdmins: false, ip: '198.51.100.2' };

async function federation(users: User[] = []) {
  const f = useCaseFixture({ users, mfaFromFactors: true });
  f.identityProvider.publish(ISSUER);
  const id = crypto.randomUUID();
  const provider = IdentityProvider.create({
    id,
    realmId: 'default',
    alias: 'acme',
    displayName: 'Acme ID',
    issuer: ISSUER,
    clientId: 'client-1',
    clientSecretEncrypted: await f.cipher.encrypt('s3cret', id),
    metadata: await f.identityProvider.discover(ISSUER),
    createdAt: f.clock.now(),
  });
  await f.providers.insert(provider);
  const returnTo = `${f.config.apiUrl}/account/`;
  const start = f.build(StartFederationUseCase);
  const complete = f.build(CompleteFederationUseCase);

  /** A sign-in (or a link) through the provider, which vouches for `claims`: where the browser is sent back. */
  async function throughProvider(
    claims: Partial<ProviderClaims> | Error,
    link?: { userId: string; sessionId: string },
  ): Promise<{ code: string | null; linkCode: string | null; error: string | null }> {
    const { authorizationUrl } = await start.execute({
      realm: f.realm,
      alias: 'acme',
      returnTo,
      codeChallenge: f.secureTokens.pkceChallenge(VERIFIER),
      client: f.client,
      ...(link ? { linkUserId: link.userId, linkSessionId: link.sessionId } : {}),
    });
    const state = new URL(authorizationUrl).searchParams.get('state')!;
    if (claims instanceof Error) f.identityProvider.willFail(claims.message);
    else f.identityProvider.willVouchFor(claims);
    const { redirect } = await complete.execute({
      alias: 'acme',
      callbackUrl: `${federationRedirectUri(f.config.apiUrl, 'acme')}?code=provider-code&state=${state}`,
      state,
      error: undefined,
      ip: '203.0.113.9',
    });
    const back = new URL(redirect);
    expect(back.origin + back.pathname).toBe(returnTo);
    return { code: back.searchParams.get('code'), linkCode: back.searchParams.get('link_code'), error: back.searchParams.get('error') };
  }

  return {
    ...f,
    provider,
    returnTo,
    start,
    complete,
    throughProvider,
    exchange: f.build(ExchangeLoginCodeUseCase),
    link: f.build(LinkIdentityUseCase),
    unlink: f.build(UnlinkIdentityUseCase),
    failures: () => f.audit.entries.filter((e) => e.type === 'login.failed').map((e) => e.details?.reason),
  };
}

function someone(overrides: Partial<UserState> = {}): User {
  return aUser({ email: 'ada@example.com', ...overrides });
}

function anIdentity(user: User, provider: IdentityProvider, subject: string, at: Date): LinkedIdentity {
  return {
    id: crypto.randomUUID(),
    realmId: user.realmId,
    userId: user.id,
    providerId: provider.id,
    provider: provider.alias,
    subject,
    email: user.email,
    linkedAt: at,
    lastUsedAt: null,
  };
}

describe('StartFederationUseCase', () => {
  it("sends the browser to the provider with a single-use state, the provider's PKCE challenge and the callback", async () => {
    const f = await federation();
    const { authorizationUrl } = await f.start.execute({
      realm: f.realm,
      alias: 'acme',
      returnTo: f.returnTo,
      codeChallenge: f.secureTokens.pkceChallenge(VERIFIER),
      client: f.client,
    });
    const url = new URL(authorizationUrl);
    expect(url.origin + url.pathname).toBe(`${ISSUER}/authorize`);
    expect(url.searchParams.get('redirect_uri')).toBe(federationRedirectUri(f.config.apiUrl, 'acme'));
    expect(url.searchParams.get('client_id')).toBe('client-1');
    expect(url.searchParams.get('scope')).toBe('openid email profile');
    const state = url.searchParams.get('state')!;
    const stored = [...f.federationTokens.rows.values()];
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ tokenHash: f.secureTokens.hash(state), kind: 'state', providerId: f.provider.id });
    expect(stored[0].expiresAt.getTime() - f.clock.now().getTime()).toBe(600_000);
    const flow = stored[0].payload as { providerVerifier: string; nonce: string; returnTo: string };
    expect(url.searchParams.get('code_challenge')).toBe(f.secureTokens.pkceChallenge(flow.providerVerifier));
    expect(url.searchParams.get('nonce')).toBe(flow.nonce);
    expect(flow.returnTo).toBe(f.returnTo);
  });

  it('refuses an unknown or disabled provider, a return URL the realm does not allow, and a malformed challenge', async () => {
    const f = await federation();
    const input = {
      realm: f.realm,
      alias: 'acme',
      returnTo: f.returnTo,
      codeChallenge: f.secureTokens.pkceChallenge(VERIFIER),
      client: f.client,
    };
    await expect(f.start.execute({ ...input, alias: 'nope' })).rejects.toMatchObject({ code: 'IDENTITY_PROVIDER_NOT_FOUND' });
    await expect(f.start.execute({ ...input, returnTo: 'https://evil.example.net/' })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      meta: { details: [{ field: 'returnTo' }] },
    });
    await expect(f.start.execute({ ...input, codeChallenge: 'short' })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      meta: { details: [{ field: 'codeChallenge' }] },
    });
    f.provider.update({ enabled: false }, f.clock.now());
    await f.providers.save(f.provider);
    await expect(f.start.execute(input)).rejects.toMatchObject({ code: 'IDENTITY_PROVIDER_NOT_FOUND' });
    expect(f.federationTokens.rows.size).toBe(0);
  });

  it('starts a link only from a session that signed in recently', async () => {
    const user = someone();
    const f = await federation([user]);
    const sessionId = await f.signedIn(user.id);
    const input = {
      realm: f.realm,
      alias: 'acme',
      returnTo: f.returnTo,
      codeChallenge: f.secureTokens.pkceChallenge(VERIFIER),
      client: f.client,
    };
    await expect(f.start.execute({ ...input, linkUserId: user.id })).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    f.clock.advance(f.config.recentAuthMaxAgeSeconds + 1);
    await expect(f.start.execute({ ...input, linkUserId: user.id, linkSessionId: sessionId })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    const fresh = await f.signedIn(user.id);
    await f.start.execute({ ...input, linkUserId: user.id, linkSessionId: fresh });
    expect([...f.federationTokens.rows.values()][0].payload).toMatchObject({ linkUserId: user.id });
  });
});

describe('CompleteFederationUseCase', () => {
  it('signs in the user the identity is linked to, recording the use and the address given this time', async () => {
    const user = someone({ emailVerified: true });
    const f = await federation([user]);
    const identity = anIdentity(user, f.provider, 'sub-1', f.clock.now());
    await f.identities.insert(identity);
    f.clock.advance(60);
    const back = await f.throughProvider({ subject: 'sub-1', email: 'ada.new@example.com' });
    expect(back.code).not.toBeNull();
    const stored = await f.identities.findBySubject(f.provider.id, 'sub-1');
    expect(stored?.email).toBe('ada.new@example.com');
    expect(stored?.lastUsedAt).toEqual(f.clock.now());
    const redemption = f.identityProvider.redeemed[0];
    expect(redemption.connection.clientSecret).toBe('s3cret');
    expect(redemption.request.codeVerifier).toHaveLength(43);
  });

  it('links a verified local account when the provider vouches for its address, and tells its owner', async () => {
    const user = someone({ emailVerified: true });
    const f = await federation([user]);
    const back = await f.throughProvider({ subject: 'sub-2', email: 'ada@example.com', emailVerified: true });
    expect(back.error).toBeNull();
    expect((await f.identities.findBySubject(f.provider.id, 'sub-2'))?.userId).toBe(user.id);
    expect(f.audit.types()).toContain('identity.linked');
    expect(f.lastMail()?.to).toBe('ada@example.com');
    expect(f.lastMail()?.text).toContain('Acme ID');
  });

  it('takes an unverified local account over: password, factors, identities and sessions go; the address is verified', async () => {
    const squatted = someone({ emailVerified: false, profile: { firstName: 'Squatter', lastName: 'X', avatar: null } });
    const f = await federation([squatted]);
    await f.mfaCredentials.insertWebauthn(aPasskey(squatted.id, f.clock.now()));
    const other = IdentityProvider.create({ ...f.provider.snapshot(), id: crypto.randomUUID(), alias: 'other' });
    await f.providers.insert(other);
    await f.identities.insert(anIdentity(squatted, other, 'squatter-sub', f.clock.now()));
    const squattersSession = await f.signedIn(squatted.id);
    const back = await f.throughProvider({ subject: 'owner-sub', email: 'ada@example.com', givenName: 'Ada', familyName: 'Lovelace' });
    expect(back.code).not.toBeNull();
    const owner = (await f.users.findById('default', squatted.id))!;
    expect([owner.hasPassword, owner.emailVerified, owner.mfaMethods]).toEqual([false, true, []]);
    expect(owner.profile).toMatchObject({ firstName: 'Ada', lastName: 'Lovelace' });
    expect(await f.identities.listForUser('default', squatted.id)).toEqual([
      expect.objectContaining({ provider: 'acme', subject: 'owner-sub' }),
    ]);
    expect(await f.sessions.isLive('default', squattersSession, f.clock.now(), f.realm.policy.sessionLifetime)).toBe(false);
    const takeover = f.audit.entries.find((e) => e.type === 'identity.linked');
    expect(takeover?.details).toMatchObject({ takeover: true, provider: 'acme', subject: 'owner-sub' });
  });

  it("never takes over an administrator's account, nor one whose address the provider does not vouch for", async () => {
    const adminUser = someone({ roles: ['realm-admin'] });
    const f = await federation([adminUser]);
    expect((await f.throughProvider({ subject: 'a', email: 'ada@example.com' })).error).toBe('email_already_registered');
    const g = await federation([someone()]);
    expect((await g.throughProvider({ subject: 'b', email: 'ada@example.com', emailVerified: false })).error).toBe(
      'email_already_registered',
    );
    expect((await f.users.findById('default', adminUser.id))?.hasPassword).toBe(true);
    expect(f.failures()).toEqual(['email_already_registered']);
  });

  it('registers a new user from the provider, verified only when the provider vouches for the address', async () => {
    const f = await federation();
    await f.throughProvider({ subject: 'new-1', email: 'grace@example.com', name: 'Grace Hopper', emailVerified: true });
    const vouched = (await f.users.findByEmail('default', 'grace@example.com'))!;
    expect([vouched.emailVerified, vouched.hasPassword]).toEqual([true, false]);
    expect(f.audit.entries.find((e) => e.type === 'user.registered')?.details).toEqual({ method: 'federated', provider: 'acme' });
    expect(f.mailer.sent).toHaveLength(0);
    await f.throughProvider({ subject: 'new-2', email: 'linus@example.com', emailVerified: false });
    expect((await f.users.findByEmail('default', 'linus@example.com'))?.emailVerified).toBe(false);
    expect(f.lastMail()?.to).toBe('linus@example.com');
  });

  it('refuses without an address, with registration closed, and when the provider fails or is cancelled, auditing each', async () => {
    const f = await federation();
    expect((await f.throughProvider({ subject: 'x', email: null })).error).toBe('email_required');
    const closed = await federation();
    closed.realm.update({ settings: { registration: 'closed' } }, closed.clock.now());
    await closed.realms.save(closed.realm);
    expect((await closed.throughProvider({ subject: 'y', email: 'new@example.com' })).error).toBe('registration_disabled');
    expect((await f.throughProvider(new Error('the ID token signature does not verify'))).error).toBe('provider_error');
    expect(f.failures()).toEqual(['email_required', 'provider_error']);
    const { authorizationUrl } = await f.start.execute({
      realm: f.realm,
      alias: 'acme',
      returnTo: f.returnTo,
      codeChallenge: f.secureTokens.pkceChallenge(VERIFIER),
      client: f.client,
    });
    const state = new URL(authorizationUrl).searchParams.get('state')!;
    const { redirect } = await f.complete.execute({ alias: 'acme', callbackUrl: 'https://x/', state, error: 'access_denied', ip: null });
    expect(new URL(redirect).searchParams.get('error')).toBe('access_denied');
    expect(f.identityProvider.redeemed).toHaveLength(2);
  });

  it('refuses a state that is unknown, used, or for another provider, with no redirect', async () => {
    const f = await federation();
    const { authorizationUrl } = await f.start.execute({
      realm: f.realm,
      alias: 'acme',
      returnTo: f.returnTo,
      codeChallenge: f.secureTokens.pkceChallenge(VERIFIER),
      client: f.client,
    });
    const state = new URL(authorizationUrl).searchParams.get('state')!;
    const callback = { callbackUrl: `https://x/?state=${state}`, error: undefined, ip: null };
    await expect(f.complete.execute({ ...callback, alias: 'acme', state: undefined })).rejects.toMatchObject({
      code: 'INVALID_VERIFICATION_TOKEN',
    });
    await expect(f.complete.execute({ ...callback, alias: 'other', state })).rejects.toMatchObject({ code: 'INVALID_VERIFICATION_TOKEN' });
    // The try above spent the state.
    await expect(f.complete.execute({ ...callback, alias: 'acme', state })).rejects.toMatchObject({ code: 'INVALID_VERIFICATION_TOKEN' });
    expect(f.identityProvider.redeemed).toHaveLength(0);
  });

  it('answers a link with a link code for its user, and refuses an account linked to someone else', async () => {
    const [user, other] = [someone({ emailVerified: true }), aUser()];
    const f = await federation([user, other]);
    await f.identities.insert(anIdentity(other, f.provider, 'taken-sub', f.clock.now()));
    const sessionId = await f.signedIn(user.id);
    const back = await f.throughProvider({ subject: 'fresh-sub', email: 'someone-else@example.com' }, { userId: user.id, sessionId });
    expect(back.linkCode).not.toBeNull();
    expect(back.code).toBeNull();
    // Nothing is linked until the user who started it posts the code.
    expect(await f.identities.findBySubject(f.provider.id, 'fresh-sub')).toBeNull();
    const taken = await f.throughProvider({ subject: 'taken-sub' }, { userId: user.id, sessionId });
    expect(taken.error).toBe('identity_in_use');
  });
});

describe('ExchangeLoginCodeUseCase', () => {
  it('signs in with the login code and the verifier of the start, once, amr fed', async () => {
    const user = someone({ emailVerified: true });
    const f = await federation([user]);
    await f.identities.insert(anIdentity(user, f.provider, 'sub-1', f.clock.now()));
    const { code } = await f.throughProvider({ subject: 'sub-1' });
    const outcome = await f.exchange.execute({ realm: f.realm, code: code!, codeVerifier: VERIFIER, client: f.client });
    expect(outcome.kind).toBe('authenticated');
    if (outcome.kind !== 'authenticated') return;
    expect(outcome.user.id).toBe(user.id);
    expect((await f.sessions.findById('default', outcome.sessionId))?.amr).toEqual(['fed']);
    await expect(f.exchange.execute({ realm: f.realm, code: code!, codeVerifier: VERIFIER, client: f.client })).rejects.toMatchObject({
      code: 'INVALID_TOKEN',
    });
  });

  it('spends the code on a wrong verifier, and refuses a code whose identity was unlinked meanwhile', async () => {
    const user = someone({ emailVerified: true });
    const f = await federation([user]);
    const identity = anIdentity(user, f.provider, 'sub-1', f.clock.now());
    await f.identities.insert(identity);
    const first = await f.throughProvider({ subject: 'sub-1' });
    await expect(
      f.exchange.execute({ realm: f.realm, code: first.code!, codeVerifier: 'w'.repeat(43), client: f.client }),
    ).rejects.toMatchObject({
      code: 'INVALID_TOKEN',
    });
    await expect(f.exchange.execute({ realm: f.realm, code: first.code!, codeVerifier: VERIFIER, client: f.client })).rejects.toMatchObject(
      {
        code: 'INVALID_TOKEN',
      },
    );
    const second = await f.throughProvider({ subject: 'sub-1' });
    await f.identities.delete('default', user.id, identity.id);
    await expect(
      f.exchange.execute({ realm: f.realm, code: second.code!, codeVerifier: VERIFIER, client: f.client }),
    ).rejects.toMatchObject({
      code: 'INVALID_TOKEN',
    });
    await expect(f.exchange.execute({ realm: f.realm, code: 'short', codeVerifier: VERIFIER, client: f.client })).rejects.toMatchObject({
      code: 'INVALID_TOKEN',
    });
    expect(
      await f.sessions.list({ realmId: 'default', page: 1, limit: 10, now: f.clock.now(), lifetime: f.realm.policy.sessionLifetime }),
    ).toMatchObject({
      total: 0,
    });
  });

  it('asks for the second factor of a user with MFA instead of opening a session', async () => {
    const user = someone({ emailVerified: true });
    const f = await federation([user]);
    await f.mfaCredentials.savePendingTotp({
      userId: user.id,
      secretEncrypted: 'x',
      confirmedAt: null,
      lastUsedStep: 0,
      createdAt: f.clock.now(),
    });
    await f.mfaCredentials.confirmTotp(user.id, 1, f.clock.now());
    await f.identities.insert(anIdentity(user, f.provider, 'sub-1', f.clock.now()));
    const { code } = await f.throughProvider({ subject: 'sub-1' });
    const outcome = await f.exchange.execute({ realm: f.realm, code: code!, codeVerifier: VERIFIER, client: f.client });
    expect(outcome).toMatchObject({ kind: 'mfa-required', methods: ['totp'] });
  });
});

describe('LinkIdentityUseCase', () => {
  async function linkCodeFor(f: Awaited<ReturnType<typeof federation>>, user: User, subject: string) {
    const sessionId = await f.signedIn(user.id);
    const { linkCode } = await f.throughProvider({ subject, email: 'ada@work.example.com' }, { userId: user.id, sessionId });
    return { sessionId, code: linkCode! };
  }

  it('links the account for the user who started it, with the verifier of the start, audited', async () => {
    const user = someone({ emailVerified: true });
    const f = await federation([user]);
    const { sessionId, code } = await linkCodeFor(f, user, 'work-sub');
    const linked = await f.link.execute({ realm: f.realm, userId: user.id, sessionId, code, codeVerifier: VERIFIER, ip: '203.0.113.9' });
    expect(linked).toMatchObject({ userId: user.id, provider: 'acme', subject: 'work-sub', email: 'ada@work.example.com' });
    expect(await f.identities.listForUser('default', user.id)).toEqual([linked]);
    expect(f.audit.entries.find((e) => e.type === 'identity.linked')).toMatchObject({ userId: user.id, sessionId });
    await expect(
      f.link.execute({ realm: f.realm, userId: user.id, sessionId, code, codeVerifier: VERIFIER, ip: null }),
    ).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
  });

  it('refuses another user, a wrong verifier, an ended session and a disabled provider, spending the code', async () => {
    const [user, intruder] = [someone({ emailVerified: true }), aUser()];
    const f = await federation([user, intruder]);
    const intruderSession = await f.signedIn(intruder.id);
    const a = await linkCodeFor(f, user, 's1');
    await expect(
      f.link.execute({ realm: f.realm, userId: intruder.id, sessionId: intruderSession, code: a.code, codeVerifier: VERIFIER, ip: null }),
    ).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    await expect(
      f.link.execute({ realm: f.realm, userId: user.id, sessionId: a.sessionId, code: a.code, codeVerifier: VERIFIER, ip: null }),
    ).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    const b = await linkCodeFor(f, user, 's2');
    await expect(
      f.link.execute({ realm: f.realm, userId: user.id, sessionId: b.sessionId, code: b.code, codeVerifier: 'w'.repeat(43), ip: null }),
    ).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    const c = await linkCodeFor(f, user, 's3');
    await f.sessions.revoke('default', c.sessionId, f.clock.now(), 'logout');
    await expect(
      f.link.execute({ realm: f.realm, userId: user.id, sessionId: c.sessionId, code: c.code, codeVerifier: VERIFIER, ip: null }),
    ).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    const d = await linkCodeFor(f, user, 's4');
    f.provider.update({ enabled: false }, f.clock.now());
    await f.providers.save(f.provider);
    await expect(
      f.link.execute({ realm: f.realm, userId: user.id, sessionId: d.sessionId, code: d.code, codeVerifier: VERIFIER, ip: null }),
    ).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    expect(await f.identities.listForUser('default', user.id)).toEqual([]);
  });

  it('answers the existing link when the account is linked to the caller already, and refuses one linked to another meanwhile', async () => {
    const [user, other] = [someone({ emailVerified: true }), aUser()];
    const f = await federation([user, other]);
    const mine = await linkCodeFor(f, user, 'mine');
    const existing = anIdentity(user, f.provider, 'mine', f.clock.now());
    await f.identities.insert(existing);
    expect(
      await f.link.execute({
        realm: f.realm,
        userId: user.id,
        sessionId: mine.sessionId,
        code: mine.code,
        codeVerifier: VERIFIER,
        ip: null,
      }),
    ).toEqual(existing);
    const raced = await linkCodeFor(f, user, 'raced');
    await f.identities.insert(anIdentity(other, f.provider, 'raced', f.clock.now()));
    await expect(
      f.link.execute({ realm: f.realm, userId: user.id, sessionId: raced.sessionId, code: raced.code, codeVerifier: VERIFIER, ip: null }),
    ).rejects.toMatchObject({ code: 'INVALID_USER_STATE' });
  });

  it('refuses a flagged session before spending the code', async () => {
    const user = someone({ emailVerified: true });
    const f = await federation([user]);
    const { sessionId, code } = await linkCodeFor(f, user, 'sub');
    const session = (await f.sessions.findById('default', sessionId))!;
    session.flagMismatch(0.2, f.clock.now());
    await f.sessions.save(session);
    await expect(
      f.link.execute({ realm: f.realm, userId: user.id, sessionId, code, codeVerifier: VERIFIER, ip: null }),
    ).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    expect([...f.federationTokens.rows.values()].find((t) => t.kind === 'link_code')?.usedAt).toBeNull();
  });
});

describe('UnlinkIdentityUseCase', () => {
  it("refuses to remove a passwordless user's last way in, unless a passkey remains or an administrator does it", async () => {
    const user = someone({ emailVerified: true, passwordHash: null });
    const f = await federation([user]);
    const identity = anIdentity(user, f.provider, 'only', f.clock.now());
    await f.identities.insert(identity);
    const sessionId = await f.signedIn(user.id);
    const own = { realmId: 'default', userId: user.id, identityId: identity.id, ip: null, sessionId };
    await expect(f.unlink.execute(own)).rejects.toMatchObject({ code: 'INVALID_USER_STATE' });
    await f.mfaCredentials.insertWebauthn(
      aPasskey(user.id, f.clock.now(), { disabledAt: f.clock.now(), disabledReason: 'counter_regression' }),
    );
    await expect(f.unlink.execute(own)).rejects.toMatchObject({ code: 'INVALID_USER_STATE' });
    await f.mfaCredentials.insertWebauthn(aPasskey(user.id, f.clock.now(), { id: 'cred-2' }));
    await f.unlink.execute(own);
    expect(await f.identities.listForUser('default', user.id)).toEqual([]);
    expect(f.audit.entries.find((e) => e.type === 'identity.unlinked')).toMatchObject({ actorId: null, details: { provider: 'acme' } });

    const g = await federation([someone({ passwordHash: null })]);
    const lone = g.users.all()[0];
    const last = anIdentity(lone, g.provider, 'only', g.clock.now());
    await g.identities.insert(last);
    await g.unlink.execute({ realmId: 'default', userId: lone.id, identityId: last.id, ip: null, adminId: 'admin-1' });
    expect(g.audit.entries.find((e) => e.type === 'identity.unlinked')?.actorId).toBe('admin-1');
  });

  it("answers NOT_FOUND for another user's identity and USER_NOT_FOUND for an unknown user", async () => {
    const [user, other] = [someone(), aUser()];
    const f = await federation([user, other]);
    const theirs = anIdentity(other, f.provider, 'theirs', f.clock.now());
    await f.identities.insert(theirs);
    await expect(
      f.unlink.execute({ realmId: 'default', userId: user.id, identityId: theirs.id, ip: null, adminId: 'a' }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(
      f.unlink.execute({ realmId: 'default', userId: crypto.randomUUID(), identityId: theirs.id, ip: null, adminId: 'a' }),
    ).rejects.toMatchObject({ code: 'USER_NOT_FOUND' });
    expect(await f.identities.findBySubject(f.provider.id, 'theirs')).not.toBeNull();
  });
});

describe('identity provider administration', () => {
  it('creates a provider from its discovery document, the secret sealed to its id, and refuses a malformed alias before any request', async () => {
    const f = useCaseFixture();
    f.identityProvider.publish('https://login.example.org', { issuer: 'https://login.example.org/' });
    const create = f.build(CreateIdentityProviderUseCase);
    const input = {
      actor: admin,
      realmId: 'default',
      alias: 'org',
      displayName: 'Org',
      issuer: 'https://login.example.org',
      clientId: 'c',
    };
    const created = await create.execute({ ...input, clientSecret: 'pssst' });
    expect(created.issuer).toBe('https://login.example.org/');
    expect(await f.cipher.decrypt(created.clientSecretEncrypted!, created.id)).toBe('pssst');
    expect((await f.providers.findByAlias('default', 'org'))?.id).toBe(created.id);
    expect(f.audit.entries.at(-1)).toMatchObject({ type: 'identity_provider.created', actorId: 'admin-1' });
    await expect(create.execute(input)).rejects.toMatchObject({ code: 'IDENTITY_PROVIDER_EXISTS' });
    await expect(create.execute({ ...input, alias: 'Bad Alias', issuer: 'https://unknown.example' })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      meta: { details: [{ field: 'alias' }] },
    });
    await expect(create.execute({ ...input, alias: 'other', issuer: 'https://unknown.example' })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      meta: { details: [{ field: 'issuer' }] },
    });
  });

  it('moving a provider to another issuer unlinks its accounts; other changes keep them', async () => {
    const user = someone();
    const f = await federation([user]);
    f.identityProvider.publish('https://new-idp.example.com');
    await f.identities.insert(anIdentity(user, f.provider, 'sub', f.clock.now()));
    const update = f.build(UpdateIdentityProviderUseCase);
    const renamed = await update.execute({ actor: admin, realmId: 'default', alias: 'acme', displayName: 'Acme', clientSecret: null });
    expect([renamed.displayName, renamed.hasClientSecret]).toEqual(['Acme', false]);
    expect(await f.identities.listForUser('default', user.id)).toHaveLength(1);
    await update.execute({ actor: admin, realmId: 'default', alias: 'acme', issuer: 'https://new-idp.example.com' });
    expect(await f.identities.listForUser('default', user.id)).toEqual([]);
    expect((await f.providers.findByAlias('default', 'acme'))?.issuer).toBe('https://new-idp.example.com');
    expect(f.audit.entries.at(-1)?.details).toMatchObject({ changed: ['issuer'], identitiesUnlinked: 1 });
    await expect(update.execute({ actor: admin, realmId: 'default', alias: 'nope' })).rejects.toMatchObject({
      code: 'IDENTITY_PROVIDER_NOT_FOUND',
    });
  });

  it('deletes a provider with its links, lists the enabled ones for sign-in buttons, and lists users’ identities', async () => {
    const user = someone();
    const f = await federation([user]);
    const second = IdentityProvider.create({ ...f.provider.snapshot(), id: crypto.randomUUID(), alias: 'beta', enabled: false });
    await f.providers.insert(second);
    await f.identities.insert(anIdentity(user, second, 'beta-sub', f.clock.now()));
    const list = f.build(ListIdentityProvidersUseCase);
    expect((await list.execute({ realmId: 'default' })).map((p) => p.alias)).toEqual(['acme', 'beta']);
    expect((await list.execute({ realmId: 'default', enabledOnly: true })).map((p) => p.alias)).toEqual(['acme']);
    expect((await list.execute({ realmId: 'default', alias: 'beta' }))[0].id).toBe(second.id);
    await expect(list.execute({ realmId: 'default', alias: 'gamma' })).rejects.toMatchObject({ code: 'IDENTITY_PROVIDER_NOT_FOUND' });
    const identities = f.build(ListUserIdentitiesUseCase);
    expect((await identities.forUsers('default', [{ id: user.id, linkedIdentities: true }])).get(user.id)).toHaveLength(1);
    expect((await identities.forUsers('default', [{ id: user.id, linkedIdentities: false }])).size).toBe(0);
    const remove = f.build(DeleteIdentityProviderUseCase);
    await remove.execute({ actor: admin, realmId: 'default', alias: 'beta' });
    expect(await f.identities.listForUser('default', user.id)).toEqual([]);
    await expect(remove.execute({ actor: admin, realmId: 'default', alias: 'beta' })).rejects.toMatchObject({
      code: 'IDENTITY_PROVIDER_NOT_FOUND',
    });
    expect(f.audit.types().filter((t) => t === 'identity_provider.deleted')).toHaveLength(1);
  });
});
