import { DataSource } from 'typeorm';
import { FederationTokenRepository } from '../../src/application/ports/federation-token.repository';
import { IdentityProviderRepository } from '../../src/application/ports/identity-provider.repository';
import { IdentityInUseError, LinkedIdentityRepository } from '../../src/application/ports/linked-identity.repository';
import { OneTimeToken, OneTimeTokenRepository } from '../../src/application/ports/one-time-token.repository';
import { RealmRepository } from '../../src/application/ports/realm.repository';
import { RoleRepository } from '../../src/application/ports/role.repository';
import { Transaction } from '../../src/application/ports/transaction';
import { UserRepository } from '../../src/application/ports/user.repository';
import { WebhookRepository } from '../../src/application/ports/webhook.repository';
import { realmDefaultsFrom } from '../../src/application/realm/realm-defaults';
import { loadConfig } from '../../src/config/load-config';
import { IdentityProvider } from '../../src/domain/federation/identity-provider';
import { LinkedIdentity } from '../../src/domain/federation/linked-identity';
import { Realm } from '../../src/domain/realm/realm';
import { Role } from '../../src/domain/role/role';
import { Webhook, WebhookDelivery, WebhookDeliveryStatus } from '../../src/domain/webhook/webhook';
import { aUser } from '../builders/user.builder';
import { InMemoryFederationTokenRepository } from '../fakes/in-memory-federation-token.repository';
import { InMemoryRealmRepository } from '../fakes/in-memory-housekeeping';
import { InMemoryIdentityProviderRepository } from '../fakes/in-memory-identity-provider.repository';
import { InMemoryLinkedIdentityRepository } from '../fakes/in-memory-linked-identity.repository';
import { InMemoryOneTimeTokenRepository } from '../fakes/in-memory-one-time-token.repository';
import { InMemoryRoleRepository } from '../fakes/in-memory-role.repository';
import { InMemoryUserRepository } from '../fakes/in-memory-user.repository';
import { InMemoryWebhookRepository } from '../fakes/in-memory-webhook.repository';
import { immediateTransaction } from '../fakes/simple-fakes';
import { createTestApp, TestApp } from '../support/test-app';

/**
 * The repositories of the satellites (one-time and federation tokens, identity providers and
 * linked identities, roles, realms, webhooks), each run against its in-memory fake and its
 * TypeORM adapter on the database, so the fakes the use-case tests rely on cannot drift.
 */
interface Repos {
  users: UserRepository;
  oneTimeTokens: OneTimeTokenRepository;
  federationTokens: FederationTokenRepository;
  providers: IdentityProviderRepository;
  identities: LinkedIdentityRepository;
  roles: RoleRepository;
  realms: RealmRepository;
  webhooks: WebhookRepository;
  tx: Transaction;
  /** A delivery as the dispatcher leaves it: the port only reads and requeues them. */
  addDelivery(realmId: string, delivery: WebhookDelivery): Promise<void>;
}

const now = new Date('2026-11-25T12:00:00.000Z');
const at = (seconds: number) => new Date(now.getTime() + seconds * 1000);
const defaults = realmDefaultsFrom(loadConfig({}));

function anOneTimeToken(overrides: Partial<OneTimeToken> = {}): OneTimeToken {
  return {
    tokenHash: `ott-${crypto.randomUUID()}`,
    realmId: 'default',
    userId: null,
    kind: 'passkey_challenge',
    email: null,
    payload: { challenge: 'c' },
    attempts: 0,
    createdAt: now,
    expiresAt: at(600),
    usedAt: null,
    ...overrides,
  };
}

function aProvider(overrides: { realmId?: string; alias?: string; clientSecretEncrypted?: string | null } = {}): IdentityProvider {
  return IdentityProvider.create({
    id: crypto.randomUUID(),
    realmId: overrides.realmId ?? 'default',
    alias: overrides.alias ?? `idp-${crypto.randomUUID().slice(0, 8)}`,
    displayName: 'Example IdP',
    issuer: 'https://idp.example.com',
    clientId: 'client-1',
    clientSecretEncrypted: overrides.clientSecretEncrypted ?? null,
    metadata: { issuer: 'https://idp.example.com', authorization_endpoint: 'https://idp.example.com/authorize' },
    createdAt: now,
  });
}

function anIdentity(userId: string, provider: IdentityProvider, overrides: Partial<LinkedIdentity> = {}): LinkedIdentity {
  return {
    id: crypto.randomUUID(),
    realmId: provider.realmId,
    userId,
    providerId: provider.id,
    provider: provider.alias,
    subject: `sub-${crypto.randomUUID()}`,
    email: 'ada@example.com',
    linkedAt: now,
    lastUsedAt: null,
    ...overrides,
  };
}

function aWebhook(realmId = 'default', createdAt = now): Webhook {
  return Webhook.create({
    id: crypto.randomUUID(),
    realmId,
    url: 'https://hooks.example.com/in',
    events: ['user.registered'],
    description: null,
    secret: `whsec_${crypto.randomUUID()}`,
    createdAt,
  });
}

function aDelivery(webhookId: string, status: WebhookDeliveryStatus, createdAt: Date): WebhookDelivery {
  return {
    id: crypto.randomUUID(),
    webhookId,
    eventId: crypto.randomUUID(),
    type: 'user.registered',
    status,
    attempts: status === 'pending' ? 0 : 3,
    lastStatusCode: status === 'failed' ? 500 : status === 'delivered' ? 204 : null,
    lastError: status === 'failed' ? 'HTTP 500' : null,
    lastAttemptAt: status === 'pending' ? null : createdAt,
    nextAttemptAt: status === 'pending' ? createdAt : null,
    createdAt,
  };
}

function contract(name: string, setup: () => Promise<{ repos: Repos; teardown: () => Promise<void> }>) {
  describe(`satellite repository contract: ${name}`, () => {
    let repos: Repos;
    let teardown: () => Promise<void>;
    beforeAll(async () => {
      ({ repos, teardown } = await setup());
    }, 60_000);
    afterAll(async () => teardown());

    async function newUser(realmId = 'default', roles: string[] = []): Promise<string> {
      const user = aUser({ realmId, roles });
      await repos.users.insert(user);
      return user.id;
    }

    describe('one-time tokens', () => {
      it('finds a token by hash and kind only, and hands out copies', async () => {
        const userId = await newUser();
        const token = anOneTimeToken({ userId, kind: 'email_verification', email: 'ada@example.com', payload: { n: 1 } });
        await repos.oneTimeTokens.insert(token);
        const found = await repos.oneTimeTokens.find(token.tokenHash, 'email_verification');
        expect(found).toMatchObject({ userId, kind: 'email_verification', email: 'ada@example.com', attempts: 0, usedAt: null });
        expect(found?.expiresAt.toISOString()).toBe(token.expiresAt.toISOString());
        expect(await repos.oneTimeTokens.find(token.tokenHash, 'password_reset')).toBeNull();
        expect(await repos.oneTimeTokens.find('unknown', 'email_verification')).toBeNull();
        found!.payload.n = 2;
        expect((await repos.oneTimeTokens.find(token.tokenHash, 'email_verification'))?.payload).toEqual({ n: 1 });
      });

      it('consumes a token once, and never once it has expired', async () => {
        const token = anOneTimeToken();
        await repos.oneTimeTokens.insert(token);
        const raced = await Promise.all([
          repos.oneTimeTokens.consume(token.tokenHash, now),
          repos.oneTimeTokens.consume(token.tokenHash, now),
        ]);
        expect(raced.filter(Boolean)).toHaveLength(1);
        expect((await repos.oneTimeTokens.find(token.tokenHash, 'passkey_challenge'))?.usedAt?.toISOString()).toBe(now.toISOString());
        const expired = anOneTimeToken({ expiresAt: now });
        await repos.oneTimeTokens.insert(expired);
        expect(await repos.oneTimeTokens.consume(expired.tokenHash, now)).toBe(false);
        expect(await repos.oneTimeTokens.consume('unknown', now)).toBe(false);
      });

      it('counts failed attempts and uses the token up at the limit', async () => {
        const userId = await newUser();
        const token = anOneTimeToken({ userId, kind: 'mfa' });
        await repos.oneTimeTokens.insert(token);
        expect(await repos.oneTimeTokens.recordFailedAttempt(token.tokenHash, now, 3)).toBe(1);
        expect(await repos.oneTimeTokens.recordFailedAttempt(token.tokenHash, now, 3)).toBe(2);
        expect(await repos.oneTimeTokens.recordFailedAttempt(token.tokenHash, now, 3)).toBe(3);
        expect(await repos.oneTimeTokens.recordFailedAttempt(token.tokenHash, now, 3)).toBeNull();
        expect(await repos.oneTimeTokens.consume(token.tokenHash, now)).toBe(false);
        expect(await repos.oneTimeTokens.recordFailedAttempt('unknown', now, 3)).toBeNull();
      });

      it('reserves at most the given number of tries, for parallel callers too, and none on a used token', async () => {
        const token = anOneTimeToken({ kind: 'email_code', email: 'nobody@example.com' });
        await repos.oneTimeTokens.insert(token);
        const tries = await Promise.all([1, 2, 3, 4, 5, 6, 7].map(() => repos.oneTimeTokens.reserveAttempt(token.tokenHash, now, 5)));
        expect(tries.filter((t) => t !== null).sort()).toEqual([1, 2, 3, 4, 5]);
        expect((await repos.oneTimeTokens.find(token.tokenHash, 'email_code'))?.attempts).toBe(5);
        // Out of tries is not used: the token may still be consumed by a try already taken.
        expect(await repos.oneTimeTokens.consume(token.tokenHash, now)).toBe(true);
        const used = anOneTimeToken({ kind: 'email_code', email: 'nobody@example.com', usedAt: now });
        await repos.oneTimeTokens.insert(used);
        expect(await repos.oneTimeTokens.reserveAttempt(used.tokenHash, now, 5)).toBeNull();
        expect(await repos.oneTimeTokens.reserveAttempt(token.tokenHash, at(601), 5)).toBeNull();
      });

      it("voids a user's unused tokens of one kind, and an address's of one kind in one realm", async () => {
        const userId = await newUser();
        const reset = anOneTimeToken({ userId, kind: 'password_reset', email: 'a@example.com' });
        const verification = anOneTimeToken({ userId, kind: 'email_verification', email: 'a@example.com' });
        const email = `code-${crypto.randomUUID()}@example.com`;
        const code = anOneTimeToken({ kind: 'email_code', email });
        const masterCode = anOneTimeToken({ kind: 'email_code', email, realmId: 'master' });
        for (const t of [reset, verification, code, masterCode]) await repos.oneTimeTokens.insert(t);
        await repos.oneTimeTokens.voidUnused(userId, 'password_reset', at(1));
        await repos.oneTimeTokens.voidUnusedForEmail('default', email, 'email_code', at(2));
        expect((await repos.oneTimeTokens.find(reset.tokenHash, 'password_reset'))?.usedAt?.toISOString()).toBe(at(1).toISOString());
        expect((await repos.oneTimeTokens.find(verification.tokenHash, 'email_verification'))?.usedAt).toBeNull();
        expect((await repos.oneTimeTokens.find(code.tokenHash, 'email_code'))?.usedAt?.toISOString()).toBe(at(2).toISOString());
        expect((await repos.oneTimeTokens.find(masterCode.tokenHash, 'email_code'))?.usedAt).toBeNull();
      });

      it("finds an address's newest token of a kind, used or not", async () => {
        const email = `latest-${crypto.randomUUID()}@example.com`;
        const older = anOneTimeToken({ kind: 'email_code', email, createdAt: now });
        const newer = anOneTimeToken({ kind: 'email_code', email, createdAt: at(5), usedAt: at(6) });
        await repos.oneTimeTokens.insert(newer);
        await repos.oneTimeTokens.insert(older);
        expect((await repos.oneTimeTokens.findLatestForEmail('default', email, 'email_code'))?.tokenHash).toBe(newer.tokenHash);
        expect(await repos.oneTimeTokens.findLatestForEmail('master', email, 'email_code')).toBeNull();
        expect(await repos.oneTimeTokens.findLatestForEmail('default', 'nobody-at-all@example.com', 'email_code')).toBeNull();
      });

      it('sets a payload flag once, only on a live token, and replaces a payload', async () => {
        const token = anOneTimeToken({ kind: 'email_code', email: 'flag@example.com', payload: { codeHash: 'h' } });
        await repos.oneTimeTokens.insert(token);
        const raced = await Promise.all([
          repos.oneTimeTokens.setPayloadFlag(token.tokenHash, 'linkSpent', now),
          repos.oneTimeTokens.setPayloadFlag(token.tokenHash, 'linkSpent', now),
        ]);
        expect(raced.filter(Boolean)).toHaveLength(1);
        expect((await repos.oneTimeTokens.find(token.tokenHash, 'email_code'))?.payload).toEqual({ codeHash: 'h', linkSpent: true });
        expect(await repos.oneTimeTokens.setPayloadFlag(token.tokenHash, 'other', at(601))).toBe(false);
        await repos.oneTimeTokens.updatePayload(token.tokenHash, { replaced: true });
        expect((await repos.oneTimeTokens.find(token.tokenHash, 'email_code'))?.payload).toEqual({ replaced: true });
        await repos.oneTimeTokens.consume(token.tokenHash, now);
        expect(await repos.oneTimeTokens.setPayloadFlag(token.tokenHash, 'other', now)).toBe(false);
      });
    });

    describe('federation tokens', () => {
      it('gives a token once, of its kind, while unexpired, with its payload', async () => {
        const provider = aProvider();
        await repos.providers.insert(provider);
        const token = {
          tokenHash: `fed-${crypto.randomUUID()}`,
          kind: 'state' as const,
          realmId: 'default',
          providerId: provider.id,
          payload: { returnTo: 'https://app.example.com/cb', nonce: 'n' },
          createdAt: now,
          expiresAt: at(600),
        };
        await repos.federationTokens.insert(token);
        expect(await repos.federationTokens.consume(token.tokenHash, 'login_code', now)).toBeNull();
        expect(await repos.federationTokens.consume(token.tokenHash, 'state', at(600))).toBeNull();
        const raced = await Promise.all([
          repos.federationTokens.consume(token.tokenHash, 'state', now),
          repos.federationTokens.consume(token.tokenHash, 'state', now),
        ]);
        const got = raced.filter(Boolean);
        expect(got).toHaveLength(1);
        expect(got[0]).toEqual(token);
        expect(await repos.federationTokens.consume(token.tokenHash, 'state', now)).toBeNull();
        expect(await repos.federationTokens.consume('unknown', 'state', now)).toBeNull();
      });
    });

    describe('identity providers', () => {
      it('finds a provider by alias within its realm and by id, and refuses a second alias in a realm', async () => {
        const provider = aProvider({ clientSecretEncrypted: 'sealed' });
        await repos.providers.insert(provider);
        const found = await repos.providers.findByAlias('default', provider.alias);
        expect(found?.snapshot()).toEqual(provider.snapshot());
        expect((await repos.providers.findById(provider.id))?.alias).toBe(provider.alias);
        expect(await repos.providers.findByAlias('master', provider.alias)).toBeNull();
        expect(await repos.providers.findById('not-a-uuid')).toBeNull();
        expect(await repos.providers.findById(crypto.randomUUID())).toBeNull();
        await expect(repos.providers.insert(aProvider({ alias: provider.alias }))).rejects.toMatchObject({
          code: 'IDENTITY_PROVIDER_EXISTS',
        });
        await repos.providers.insert(aProvider({ alias: provider.alias, realmId: 'master' }));
      });

      it("lists a realm's providers by alias", async () => {
        const realmId = await newRealm();
        for (const alias of ['zeta', 'alpha', 'mid']) await repos.providers.insert(aProvider({ realmId, alias }));
        expect((await repos.providers.list(realmId)).map((p) => p.alias)).toEqual(['alpha', 'mid', 'zeta']);
      });

      it('saves every field but the alias, and a change not saved is not stored', async () => {
        const provider = aProvider();
        await repos.providers.insert(provider);
        const loaded = (await repos.providers.findById(provider.id))!;
        loaded.update({ displayName: 'Renamed', scopes: ['openid', 'email'], enabled: false, trustEmailVerified: false }, at(10));
        loaded.moveTo('https://other.example.com', { issuer: 'https://other.example.com' }, at(10));
        loaded.setClientSecret('sealed-2', at(10));
        await repos.providers.save(loaded);
        const stored = (await repos.providers.findById(provider.id))!.snapshot();
        expect(stored).toEqual({ ...loaded.snapshot(), alias: provider.alias, createdAt: now });
        expect(stored.updatedAt.toISOString()).toBe(at(10).toISOString());
        const unsaved = (await repos.providers.findById(provider.id))!;
        unsaved.update({ displayName: 'Never saved' }, at(20));
        expect((await repos.providers.findById(provider.id))?.displayName).toBe('Renamed');
      });

      it('deletes a provider with its links, the users staying', async () => {
        const provider = aProvider();
        await repos.providers.insert(provider);
        const userId = await newUser();
        const identity = anIdentity(userId, provider);
        await repos.identities.insert(identity);
        expect(await repos.providers.delete('master', provider.alias)).toBe(false);
        expect(await repos.providers.delete('default', provider.alias)).toBe(true);
        expect(await repos.providers.delete('default', provider.alias)).toBe(false);
        expect(await repos.providers.findById(provider.id)).toBeNull();
        expect(await repos.identities.findBySubject(provider.id, identity.subject)).toBeNull();
        expect(await repos.users.findById('default', userId)).not.toBeNull();
      });
    });

    describe('linked identities', () => {
      it('finds an identity by provider and subject, with its alias, and refuses the same account twice', async () => {
        const provider = aProvider();
        await repos.providers.insert(provider);
        const [alice, bob] = [await newUser(), await newUser()];
        const identity = anIdentity(alice, provider, { lastUsedAt: now });
        await repos.identities.insert(identity);
        expect(await repos.identities.findBySubject(provider.id, identity.subject)).toEqual(identity);
        expect(await repos.identities.findBySubject(provider.id, 'other')).toBeNull();
        await expect(repos.identities.insert(anIdentity(bob, provider, { subject: identity.subject }))).rejects.toBeInstanceOf(
          IdentityInUseError,
        );
        expect(await repos.identities.listForUser('default', bob)).toEqual([]);
      });

      it("lists a user's identities oldest first, several users' at once, within the realm", async () => {
        const [google, github] = [aProvider(), aProvider()];
        for (const p of [google, github]) await repos.providers.insert(p);
        const [alice, bob, carol] = [await newUser(), await newUser(), await newUser()];
        const newer = anIdentity(alice, google, { linkedAt: at(20) });
        const older = anIdentity(alice, github, { linkedAt: at(10) });
        const bobs = anIdentity(bob, google);
        for (const i of [newer, older, bobs]) await repos.identities.insert(i);
        expect((await repos.identities.listForUser('default', alice)).map((i) => i.id)).toEqual([older.id, newer.id]);
        expect(await repos.identities.listForUser('master', alice)).toEqual([]);
        const byUser = await repos.identities.listForUsers('default', [alice, bob, carol]);
        expect(byUser.get(alice)?.map((i) => i.provider)).toEqual([github.alias, google.alias]);
        expect(byUser.get(bob)).toEqual([bobs]);
        expect(byUser.has(carol)).toBe(false);
      });

      it('records a use with the address given this time', async () => {
        const provider = aProvider();
        await repos.providers.insert(provider);
        const identity = anIdentity(await newUser(), provider);
        await repos.identities.insert(identity);
        await repos.identities.recordUse(identity.id, null, at(30));
        const used = await repos.identities.findBySubject(provider.id, identity.subject);
        expect(used?.email).toBeNull();
        expect(used?.lastUsedAt?.toISOString()).toBe(at(30).toISOString());
        expect(used?.linkedAt.toISOString()).toBe(now.toISOString());
      });

      it("unlinks one of a user's identities, all of a user's, or all at a provider, counting them", async () => {
        const [p1, p2] = [aProvider(), aProvider()];
        for (const p of [p1, p2]) await repos.providers.insert(p);
        const [alice, bob] = [await newUser(), await newUser()];
        const a1 = anIdentity(alice, p1);
        const a2 = anIdentity(alice, p2);
        const b1 = anIdentity(bob, p1);
        const b2 = anIdentity(bob, p2);
        for (const i of [a1, a2, b1, b2]) await repos.identities.insert(i);
        expect(await repos.identities.delete('default', bob, a1.id)).toBe(false);
        expect(await repos.identities.delete('master', alice, a1.id)).toBe(false);
        expect(await repos.identities.delete('default', alice, 'not-a-uuid')).toBe(false);
        expect(await repos.identities.delete('default', alice, a1.id)).toBe(true);
        expect(await repos.identities.delete('default', alice, a1.id)).toBe(false);
        expect(await repos.identities.deleteAllForProvider(p1.id)).toBe(1);
        expect(await repos.identities.deleteAllForUser('master', bob)).toBe(0);
        expect(await repos.identities.deleteAllForUser('default', bob)).toBe(1);
        expect(await repos.identities.deleteAllForUser('default', 'not-a-uuid')).toBe(0);
        expect((await repos.identities.listForUser('default', alice)).map((i) => i.id)).toEqual([a2.id]);
      });
    });

    describe('roles', () => {
      it("lists a realm's roles by name, refuses a second of a name, and says which of a list are defined", async () => {
        const realmId = await newRealm();
        for (const name of ['support', 'billing'])
          await repos.roles.insert(Role.define({ realmId, name, description: `${name} desk`, now }));
        await expect(repos.roles.insert(Role.define({ realmId, name: 'billing', now }))).rejects.toMatchObject({ code: 'ROLE_EXISTS' });
        const listed = await repos.roles.list(realmId);
        expect(listed.map((r) => [r.name, r.description])).toEqual([
          ['billing', 'billing desk'],
          ['support', 'support desk'],
        ]);
        expect((await repos.roles.findDefined(realmId, ['support', 'nope', 'billing'])).sort()).toEqual(['billing', 'support']);
        expect(await repos.roles.findDefined(realmId, [])).toEqual([]);
        expect(await repos.roles.findDefined('default', ['support'])).toEqual([]);
      });

      it('deletes a role and takes it from every user of its realm, counting them', async () => {
        const realmId = await newRealm();
        await repos.roles.insert(Role.define({ realmId, name: 'auditor', now }));
        const holders = [await newUser(realmId, ['auditor', 'realm-admin']), await newUser(realmId, ['auditor'])];
        const other = await newUser(realmId, ['realm-admin']);
        const elsewhere = await newUser('default', ['auditor']);
        expect(await repos.roles.delete(realmId, 'auditor', at(5))).toEqual({ users: 2 });
        expect((await repos.users.findById(realmId, holders[0]))?.roles).toEqual(['realm-admin']);
        expect((await repos.users.findById(realmId, holders[1]))?.roles).toEqual([]);
        expect((await repos.users.findById(realmId, other))?.roles).toEqual(['realm-admin']);
        expect((await repos.users.findById('default', elsewhere))?.roles).toEqual(['auditor']);
        expect(await repos.roles.list(realmId)).toEqual([]);
        expect(await repos.roles.delete(realmId, 'auditor', at(5))).toBeNull();
      });
    });

    describe('realms', () => {
      it('inserts a realm once, finds it by id, and ensures without overwriting', async () => {
        const id = `r-${crypto.randomUUID().slice(0, 8)}`;
        await repos.realms.insert(Realm.create({ id, name: 'First', now }, defaults));
        await expect(repos.realms.insert(Realm.create({ id, name: 'Second', now }, defaults))).rejects.toMatchObject({
          code: 'VALIDATION_FAILED',
        });
        await repos.realms.ensure(Realm.create({ id, name: 'Third', now }, defaults));
        expect((await repos.realms.findById(id))?.name).toBe('First');
        expect((await repos.realms.findByIdForUpdate(id))?.name).toBe('First');
        expect(await repos.realms.findById('No Such Realm!')).toBeNull();
        expect(await repos.realms.findById('no-such-realm')).toBeNull();
        const ensured = `r-${crypto.randomUUID().slice(0, 8)}`;
        await repos.realms.ensure(Realm.create({ id: ensured, name: 'Ensured', now }, defaults));
        expect((await repos.realms.findById(ensured))?.name).toBe('Ensured');
      });

      it('saves name, enabled and settings, and a change not saved is not stored', async () => {
        const id = await newRealm();
        const realm = (await repos.realms.findByIdForUpdate(id))!;
        realm.update({ name: 'Renamed', enabled: false, settings: { registration: 'open' } }, at(60));
        await repos.realms.save(realm);
        const stored = (await repos.realms.findById(id))!;
        expect([stored.name, stored.enabled, stored.settings.registration]).toEqual(['Renamed', false, 'open']);
        expect(stored.updatedAt.toISOString()).toBe(at(60).toISOString());
        stored.update({ name: 'Not saved' }, at(70));
        expect((await repos.realms.findById(id))?.name).toBe('Renamed');
      });

      it('lists realms oldest first', async () => {
        const later = `r-${crypto.randomUUID().slice(0, 8)}`;
        const earlier = `r-${crypto.randomUUID().slice(0, 8)}`;
        await repos.realms.insert(Realm.create({ id: later, name: 'Later', now: at(-100) }, defaults));
        await repos.realms.insert(Realm.create({ id: earlier, name: 'Earlier', now: at(-200) }, defaults));
        const ids = (await repos.realms.list()).map((r) => r.id);
        expect(ids.indexOf(earlier)).toBeGreaterThanOrEqual(0);
        expect(ids.indexOf(earlier)).toBeLessThan(ids.indexOf(later));
      });
    });

    describe('webhooks', () => {
      it('stores a webhook with its secrets, found only in its realm, and a change not saved is not stored', async () => {
        const webhook = aWebhook();
        await repos.webhooks.save(webhook);
        const loaded = (await repos.tx.run(() => repos.webhooks.findByIdForUpdate('default', webhook.id)))!;
        expect(loaded.snapshot()).toEqual(webhook.snapshot());
        loaded.rotate('whsec_new', at(10), 3600);
        loaded.update({ events: ['*'], description: 'all', enabled: false }, at(10));
        await repos.webhooks.save(loaded);
        const stored = (await repos.webhooks.findById('default', webhook.id))!;
        expect(stored.snapshot()).toEqual(loaded.snapshot());
        expect(stored.signingSecrets(at(20))).toEqual(['whsec_new', webhook.secret]);
        expect(await repos.webhooks.findById('master', webhook.id)).toBeNull();
        expect(await repos.webhooks.findById('default', 'not-a-uuid')).toBeNull();
        expect(await repos.tx.run(() => repos.webhooks.findByIdForUpdate('default', 'not-a-uuid'))).toBeNull();
        stored.update({ url: 'https://elsewhere.example.com/in' }, at(30));
        expect((await repos.webhooks.findById('default', webhook.id))?.url).toBe(webhook.url);
      });

      it("lists a realm's webhooks oldest first", async () => {
        const realmId = await newRealm();
        const [second, first] = [aWebhook(realmId, at(20)), aWebhook(realmId, at(10))];
        await repos.webhooks.save(second);
        await repos.webhooks.save(first);
        expect((await repos.webhooks.list(realmId)).map((w) => w.id)).toEqual([first.id, second.id]);
        expect(await repos.webhooks.list(await newRealm())).toEqual([]);
      });

      it("lists a webhook's deliveries newest first, by status, with the total, only in its realm", async () => {
        const webhook = aWebhook();
        await repos.webhooks.save(webhook);
        const old = aDelivery(webhook.id, 'delivered', at(1));
        const failed = aDelivery(webhook.id, 'failed', at(2));
        const pending = aDelivery(webhook.id, 'pending', at(3));
        for (const d of [old, failed, pending]) await repos.addDelivery('default', d);
        const query = { realmId: 'default', webhookId: webhook.id, page: 1, limit: 2 };
        const page1 = await repos.webhooks.listDeliveries(query);
        expect(page1.total).toBe(3);
        expect(page1.deliveries.map((d) => d.id)).toEqual([pending.id, failed.id]);
        expect(page1.deliveries[0]).toEqual(pending);
        expect((await repos.webhooks.listDeliveries({ ...query, page: 2 })).deliveries).toEqual([old]);
        const onlyFailed = await repos.webhooks.listDeliveries({ ...query, status: 'failed' });
        expect([onlyFailed.total, onlyFailed.deliveries.map((d) => d.id)]).toEqual([1, [failed.id]]);
        expect(await repos.webhooks.listDeliveries({ ...query, realmId: 'master' })).toEqual({ deliveries: [], total: 0 });
        expect(await repos.webhooks.findDelivery('default', webhook.id, failed.id)).toEqual(failed);
        expect(await repos.webhooks.findDelivery('master', webhook.id, failed.id)).toBeNull();
        expect(await repos.webhooks.findDelivery('default', crypto.randomUUID(), failed.id)).toBeNull();
        expect(await repos.webhooks.findDelivery('default', webhook.id, 'not-a-uuid')).toBeNull();
      });

      it('requeues a failed delivery only, due now, once', async () => {
        const webhook = aWebhook();
        await repos.webhooks.save(webhook);
        const failed = aDelivery(webhook.id, 'failed', at(1));
        const delivered = aDelivery(webhook.id, 'delivered', at(2));
        for (const d of [failed, delivered]) await repos.addDelivery('default', d);
        expect(await repos.webhooks.requeueFailedDelivery('master', webhook.id, failed.id, at(50))).toBeNull();
        const requeued = await repos.webhooks.requeueFailedDelivery('default', webhook.id, failed.id, at(50));
        expect(requeued).toEqual({ ...failed, status: 'pending', nextAttemptAt: at(50) });
        expect(await repos.webhooks.requeueFailedDelivery('default', webhook.id, failed.id, at(50))).toBeNull();
        expect(await repos.webhooks.requeueFailedDelivery('default', webhook.id, delivered.id, at(50))).toBeNull();
        expect(await repos.webhooks.requeueFailedDelivery('default', webhook.id, 'not-a-uuid', at(50))).toBeNull();
        const counts = await repos.webhooks.listDeliveries({
          realmId: 'default',
          webhookId: webhook.id,
          status: 'pending',
          page: 1,
          limit: 10,
        });
        expect(counts.total).toBe(1);
      });

      it('deletes a webhook with its deliveries, once, only in its realm', async () => {
        const webhook = aWebhook();
        await repos.webhooks.save(webhook);
        const pending = aDelivery(webhook.id, 'pending', at(1));
        await repos.addDelivery('default', pending);
        expect(await repos.webhooks.delete('master', webhook.id)).toBe(false);
        expect(await repos.webhooks.delete('default', 'not-a-uuid')).toBe(false);
        expect(await repos.webhooks.delete('default', webhook.id)).toBe(true);
        expect(await repos.webhooks.delete('default', webhook.id)).toBe(false);
        expect(await repos.webhooks.findById('default', webhook.id)).toBeNull();
        expect(await repos.webhooks.findDelivery('default', webhook.id, pending.id)).toBeNull();
        // A new webhook under the same id starts with no deliveries of the old one.
        await repos.webhooks.save(webhook);
        expect((await repos.webhooks.listDeliveries({ realmId: 'default', webhookId: webhook.id, page: 1, limit: 10 })).total).toBe(0);
      });
    });

    async function newRealm(): Promise<string> {
      const id = `r-${crypto.randomUUID().slice(0, 8)}`;
      await repos.realms.insert(Realm.create({ id, name: id, now }, defaults));
      return id;
    }
  });
}

contract('in-memory fakes', async () => {
  const users = new InMemoryUserRepository();
  const identities = new InMemoryLinkedIdentityRepository();
  const webhooks = new InMemoryWebhookRepository();
  return {
    repos: {
      users,
      oneTimeTokens: new InMemoryOneTimeTokenRepository(),
      federationTokens: new InMemoryFederationTokenRepository(),
      providers: new InMemoryIdentityProviderRepository([], identities),
      identities,
      roles: new InMemoryRoleRepository(users),
      realms: new InMemoryRealmRepository(
        ['default', 'master'].map((id) => Realm.create({ id, name: id, now }, defaults)),
        defaults,
      ),
      webhooks,
      tx: immediateTransaction,
      addDelivery: async (realmId, delivery) => webhooks.addDelivery(realmId, delivery),
    },
    teardown: async () => undefined,
  };
});

contract('TypeORM on the database', async () => {
  const t: TestApp = await createTestApp();
  const db = t.app.get(DataSource);
  return {
    repos: {
      users: t.app.get(UserRepository),
      oneTimeTokens: t.app.get(OneTimeTokenRepository),
      federationTokens: t.app.get(FederationTokenRepository),
      providers: t.app.get(IdentityProviderRepository),
      identities: t.app.get(LinkedIdentityRepository),
      roles: t.app.get(RoleRepository),
      realms: t.app.get(RealmRepository),
      webhooks: t.app.get(WebhookRepository),
      tx: t.app.get(Transaction),
      addDelivery: async (realmId, d) => {
        await db.query(
          `INSERT INTO webhook_deliveries (id, webhook_id, realm_id, event_id, type, status, attempts, next_attempt_at,
             last_status_code, last_error, last_attempt_at, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
          [
            d.id,
            d.webhookId,
            realmId,
            d.eventId,
            d.type,
            d.status,
            d.attempts,
            d.nextAttemptAt ?? d.createdAt,
            d.lastStatusCode,
            d.lastError,
            d.lastAttemptAt,
            d.createdAt,
          ],
        );
      },
    },
    teardown: () => t.close(),
  };
});
