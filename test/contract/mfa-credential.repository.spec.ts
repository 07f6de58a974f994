import { MfaCredentialRepository, WebauthnCredential } from '../../src/application/ports/mfa-credential.repository';
import { UserRepository } from '../../src/application/ports/user.repository';
import { aUser } from '../builders/user.builder';
import { InMemoryMfaCredentialRepository } from '../fakes/in-memory-mfa-credential.repository';
import { InMemoryUserRepository } from '../fakes/in-memory-user.repository';
import { createTestApp, TestApp } from '../support/test-app';

/** The MFA repository contract, run against the fake and the database, so the fake cannot drift. */
const now = new Date('2026-11-25T12:00:00.000Z');

function aCredential(userId: string, overrides: Partial<WebauthnCredential> = {}): WebauthnCredential {
  return {
    id: `cred-${Math.random().toString(36).slice(2)}`,
    userId,
    name: 'Key',
    publicKey: new Uint8Array([1, 2, 3]),
    counter: 0,
    transports: ['usb'],
    deviceType: 'singleDevice',
    backedUp: false,
    passkey: false,
    createdAt: now,
    lastUsedAt: null,
    disabledAt: null,
    disabledReason: null,
    ...overrides,
  };
}

function contract(
  name: string,
  setup: () => Promise<{
    mfa: MfaCredentialRepository;
    users: UserRepository;
    newUser: () => Promise<string>;
    teardown: () => Promise<void>;
  }>,
) {
  describe(`MFA credential repository contract: ${name}`, () => {
    let mfa: MfaCredentialRepository;
    let users: UserRepository;
    let newUser: () => Promise<string>;
    let teardown: () => Promise<void>;
    beforeAll(async () => {
      ({ mfa, users, newUser, teardown } = await setup());
    }, 60_000);
    afterAll(async () => teardown());

    it('keeps a pending TOTP secret replaceable until confirmed, then refuses to replace it', async () => {
      const userId = await newUser();
      expect(await mfa.findTotp(userId)).toBeNull();
      expect(await mfa.savePendingTotp({ userId, secretEncrypted: 'one', confirmedAt: null, lastUsedStep: 0, createdAt: now })).toBe(true);
      expect(await mfa.savePendingTotp({ userId, secretEncrypted: 'two', confirmedAt: null, lastUsedStep: 0, createdAt: now })).toBe(true);
      expect((await mfa.findTotp(userId))?.secretEncrypted).toBe('two');
      expect(await mfa.advanceTotpStep(userId, 5)).toBe(false); // pending secrets accept nothing
      expect(await mfa.confirmTotp(userId, 100, now)).toBe(true);
      expect(await mfa.confirmTotp(userId, 101, now)).toBe(false);
      expect(await mfa.findTotp(userId)).toMatchObject({ secretEncrypted: 'two', lastUsedStep: 100, confirmedAt: now });
      expect(await mfa.savePendingTotp({ userId, secretEncrypted: 'three', confirmedAt: null, lastUsedStep: 0, createdAt: now })).toBe(
        false,
      );
      expect((await mfa.findTotp(userId))?.secretEncrypted).toBe('two');
    });

    it('advances the last used step only forwards, and exactly once for concurrent callers', async () => {
      const userId = await newUser();
      await mfa.savePendingTotp({ userId, secretEncrypted: 's', confirmedAt: null, lastUsedStep: 0, createdAt: now });
      await mfa.confirmTotp(userId, 100, now);
      expect(await mfa.advanceTotpStep(userId, 100)).toBe(false);
      expect(await mfa.advanceTotpStep(userId, 99)).toBe(false);
      const results = await Promise.all([1, 2, 3, 4].map(() => mfa.advanceTotpStep(userId, 101)));
      expect(results.filter(Boolean)).toHaveLength(1);
      expect((await mfa.findTotp(userId))?.lastUsedStep).toBe(101);
      expect(await mfa.deleteTotp(userId)).toBe(true);
      expect(await mfa.deleteTotp(userId)).toBe(false);
    });

    it('stores WebAuthn credentials per user, unique by id across users, with a compare-and-set counter', async () => {
      const alice = await newUser();
      const bob = await newUser();
      const key = aCredential(alice, { publicKey: new Uint8Array([9, 8, 7, 6]), counter: 3 });
      await mfa.insertWebauthn(key);
      await mfa.insertWebauthn(aCredential(alice, { createdAt: new Date(now.getTime() + 1000) }));
      await expect(mfa.insertWebauthn(aCredential(bob, { id: key.id }))).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
      const found = await mfa.findWebauthn(key.id);
      expect(found).toMatchObject({
        id: key.id,
        userId: alice,
        name: 'Key',
        counter: 3,
        transports: ['usb'],
        deviceType: 'singleDevice',
        backedUp: false,
        passkey: false,
      });
      expect(Array.from(found!.publicKey)).toEqual([9, 8, 7, 6]);
      expect((await mfa.listWebauthn(alice)).map((c) => c.id)[0]).toBe(key.id);
      expect(await mfa.listWebauthn(bob)).toEqual([]);
      const later = new Date(now.getTime() + 5000);
      const raced = await Promise.all([mfa.recordWebauthnUse(key.id, 3, 4, later), mfa.recordWebauthnUse(key.id, 3, 5, later)]);
      expect(raced.filter(Boolean)).toHaveLength(1);
      expect((await mfa.findWebauthn(key.id))?.lastUsedAt?.toISOString()).toBe(later.toISOString());
      expect(await mfa.deleteWebauthn(bob, key.id)).toBe(false);
      expect(await mfa.deleteWebauthn(alice, key.id)).toBe(true);
      expect(await mfa.findWebauthn(key.id)).toBeNull();
    });

    it('disables a WebAuthn credential once for concurrent callers, after which no use is recorded until it is removed', async () => {
      const userId = await newUser();
      const key = aCredential(userId, { counter: 7 });
      await mfa.insertWebauthn(key);
      expect(await mfa.findWebauthn(key.id)).toMatchObject({ disabledAt: null, disabledReason: null });
      const later = new Date(now.getTime() + 5000);
      const raced = await Promise.all([
        mfa.disableWebauthn(key.id, 'counter_regression', later),
        mfa.disableWebauthn(key.id, 'counter_regression', later),
        mfa.recordWebauthnUse(key.id, 7, 1000, later),
      ]);
      expect(raced.slice(0, 2).filter(Boolean)).toHaveLength(1);
      expect(await mfa.disableWebauthn(key.id, 'counter_regression', later)).toBe(false);
      expect(await mfa.disableWebauthn('no-such-credential', 'counter_regression', later)).toBe(false);
      const disabled = await mfa.findWebauthn(key.id);
      expect(disabled).toMatchObject({ disabledReason: 'counter_regression' });
      expect(disabled?.disabledAt?.toISOString()).toBe(later.toISOString());
      expect((await mfa.listWebauthn(userId))[0]?.disabledAt?.toISOString()).toBe(later.toISOString());
      // Disabled: no counter moves any more, whatever it is compared with.
      expect(await mfa.recordWebauthnUse(key.id, disabled!.counter, 0xffffffff, later)).toBe(false);
      expect((await mfa.findWebauthn(key.id))?.counter).toBe(disabled!.counter);
      expect(await mfa.deleteWebauthn(userId, key.id)).toBe(true);
      expect(await mfa.findWebauthn(key.id)).toBeNull();
    });

    it('gives a user read the MFA methods of their factors: a confirmed TOTP secret, any security key or passkey', async () => {
      const userId = await newUser();
      const methods = async () => (await users.findById('default', userId))?.mfaMethods;
      expect(await methods()).toEqual([]);
      await mfa.savePendingTotp({ userId, secretEncrypted: 's', confirmedAt: null, lastUsedStep: 0, createdAt: now });
      expect(await methods()).toEqual([]);
      await mfa.confirmTotp(userId, 1, now);
      expect(await methods()).toEqual(['totp']);
      const passkey = aCredential(userId, { passkey: true });
      await mfa.insertWebauthn(passkey);
      await mfa.disableWebauthn(passkey.id, 'counter_regression', now);
      expect(await methods()).toEqual(['totp', 'webauthn']);
      const email = (await users.findById('default', userId))!.email;
      expect((await users.findByEmail('default', email))?.mfaMethods).toEqual(['totp', 'webauthn']);
      await mfa.deleteAllForUser(userId);
      expect(await methods()).toEqual([]);
    });

    it('consumes a recovery code once, replaces them all at once, and forgets everything with deleteAllForUser', async () => {
      const userId = await newUser();
      await mfa.replaceRecoveryCodes(userId, ['h1', 'h2', 'h3'], now);
      expect(await mfa.countUnusedRecoveryCodes(userId)).toBe(3);
      const raced = await Promise.all([mfa.consumeRecoveryCode(userId, 'h1', now), mfa.consumeRecoveryCode(userId, 'h1', now)]);
      expect(raced.filter(Boolean)).toHaveLength(1);
      expect(await mfa.consumeRecoveryCode(userId, 'h1', now)).toBe(false);
      expect(await mfa.consumeRecoveryCode(userId, 'nope', now)).toBe(false);
      expect(await mfa.countUnusedRecoveryCodes(userId)).toBe(2);
      await mfa.replaceRecoveryCodes(userId, ['h4'], now);
      expect(await mfa.consumeRecoveryCode(userId, 'h2', now)).toBe(false);
      expect(await mfa.countUnusedRecoveryCodes(userId)).toBe(1);

      await mfa.savePendingTotp({ userId, secretEncrypted: 's', confirmedAt: null, lastUsedStep: 0, createdAt: now });
      await mfa.insertWebauthn(aCredential(userId));
      await mfa.deleteAllForUser(userId);
      expect(await mfa.findTotp(userId)).toBeNull();
      expect(await mfa.listWebauthn(userId)).toEqual([]);
      expect(await mfa.countUnusedRecoveryCodes(userId)).toBe(0);
    });
  });
}

contract('in-memory fake', async () => {
  const mfa = new InMemoryMfaCredentialRepository();
  const users = new InMemoryUserRepository();
  users.credentials = mfa;
  return {
    mfa,
    users,
    newUser: async () => {
      const user = aUser();
      await users.insert(user);
      return user.id;
    },
    teardown: async () => undefined,
  };
});

contract('TypeORM on the database', async () => {
  const t: TestApp = await createTestApp();
  const users = t.app.get(UserRepository);
  return {
    mfa: t.app.get(MfaCredentialRepository),
    users,
    newUser: async () => {
      const user = aUser();
      await users.insert(user);
      return user.id;
    },
    teardown: () => t.close(),
  };
});
