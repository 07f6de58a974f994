import { AccountWithEmail, decideAccount, decideLink } from '../../../src/domain/federation/account-linking';

const verifiedAccount = { subject: 'sub-1', email: 'ada@example.com', emailVerified: true };
const owner = (over: Partial<AccountWithEmail> = {}): AccountWithEmail => ({
  id: 'u1',
  emailVerified: true,
  isAdministrator: false,
  ...over,
});
const base = { linkedUserId: null, account: verifiedAccount, trustEmailVerified: true, userWithEmail: null, registrationOpen: true };

describe('decideAccount: which account a federated sign-in lands on', () => {
  it('an identity already linked signs in as its user, whatever the address says now', () => {
    expect(
      decideAccount({
        ...base,
        linkedUserId: 'u9',
        userWithEmail: owner({ id: 'u1' }),
        account: { ...verifiedAccount, emailVerified: false },
      }),
    ).toEqual({ kind: 'sign-in', userId: 'u9' });
  });

  it('links to a verified account when the provider vouches for the same address', () => {
    expect(decideAccount({ ...base, userWithEmail: owner() })).toEqual({ kind: 'link', userId: 'u1' });
  });

  it('takes over an unverified account when the provider vouches for its address', () => {
    expect(decideAccount({ ...base, userWithEmail: owner({ emailVerified: false }) })).toEqual({ kind: 'take-over', userId: 'u1' });
  });

  it('never links or takes over an administrator automatically', () => {
    expect(decideAccount({ ...base, userWithEmail: owner({ isAdministrator: true }) })).toEqual({
      kind: 'refuse',
      reason: 'email_already_registered',
    });
    expect(decideAccount({ ...base, userWithEmail: owner({ isAdministrator: true, emailVerified: false }) })).toEqual({
      kind: 'refuse',
      reason: 'email_already_registered',
    });
  });

  it('refuses an address the provider does not verify when a user has it: nothing is linked', () => {
    const account = { ...verifiedAccount, emailVerified: false };
    expect(decideAccount({ ...base, account, userWithEmail: owner() })).toEqual({ kind: 'refuse', reason: 'email_already_registered' });
    expect(decideAccount({ ...base, account, userWithEmail: owner({ emailVerified: false }) })).toEqual({
      kind: 'refuse',
      reason: 'email_already_registered',
    });
  });

  it('refuses a verified address from a provider not trusted to verify addresses when a user has it', () => {
    expect(decideAccount({ ...base, trustEmailVerified: false, userWithEmail: owner({ emailVerified: false }) })).toEqual({
      kind: 'refuse',
      reason: 'email_already_registered',
    });
  });

  it('refuses an account without an address unless it is linked', () => {
    expect(decideAccount({ ...base, account: { subject: 's', email: null, emailVerified: false } })).toEqual({
      kind: 'refuse',
      reason: 'email_required',
    });
  });

  it('registers a new user when nobody has the address, verified as far as the provider vouches', () => {
    expect(decideAccount(base)).toEqual({ kind: 'register', emailVerified: true });
    expect(decideAccount({ ...base, account: { ...verifiedAccount, emailVerified: false } })).toEqual({
      kind: 'register',
      emailVerified: false,
    });
    expect(decideAccount({ ...base, trustEmailVerified: false })).toEqual({ kind: 'register', emailVerified: false });
  });

  it('refuses to register when the realm’s registration is closed', () => {
    expect(decideAccount({ ...base, registrationOpen: false })).toEqual({ kind: 'refuse', reason: 'registration_disabled' });
  });
});

describe('decideLink: a signed-in user links an identity', () => {
  it('links an identity nobody has', () => {
    expect(decideLink({ linkedUserId: null, callerId: 'u1' })).toEqual({ kind: 'link' });
  });
  it('is a no-op for an identity the caller has already', () => {
    expect(decideLink({ linkedUserId: 'u1', callerId: 'u1' })).toEqual({ kind: 'linked-already' });
  });
  it('refuses an identity linked to someone else', () => {
    expect(decideLink({ linkedUserId: 'u2', callerId: 'u1' })).toEqual({ kind: 'refuse', reason: 'identity_in_use' });
  });
});
