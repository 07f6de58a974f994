import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { Email } from '../../domain/user/email';
import { clipName, splitName, User } from '../../domain/user/user';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { OrganizationSignIn } from '../organizations/organization-sign-in';
import { OneTimeToken, OneTimeTokenRepository } from '../ports/one-time-token.repository';
import { SecureTokens } from '../ports/secure-tokens';
import { SignInHooks } from '../ports/sign-in-hooks';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';
import { AccountTakeover } from '../account/account-takeover';
import { ClientContext } from '../sign-in/client-context';
import { DpopRequest } from '../sign-in/dpop-binding';
import { EMAIL_CODE_DIGITS, EMAIL_CODE_MAX_ATTEMPTS, emailCodeHashInput } from '../account/email-codes';
import { SignInContinuation, SignInOutcome } from '../sign-in/sign-in-continuation';

const EMAIL_AMR = ['email'];
/** The payload flag of a link that was tried: it works once, and never after a wrong verifier. */
const LINK_SPENT = 'linkSpent';

export type EmailCodeProof = { email: string; code: string } | { token: string; codeVerifier: string };

export interface EmailCodeSignInInput {
  realm: Realm;
  proof: EmailCodeProof;
  client: ClientContext;
  dpop?: DpopRequest | null;
}

/** Every refusal answers alike: which part was wrong, or whether the address has an account, stays unsaid. */
const refusedAnswer = () => new DomainError('INVALID_CREDENTIALS', 'The code or link is invalid or has expired');

/** POST /email-code/verify: sign-in with the emailed code, or with the link in the browser that asked for it. */
@Injectable()
export class EmailCodeSignInUseCase {
  constructor(
    private readonly oneTimeTokens: OneTimeTokenRepository,
    private readonly secureTokens: SecureTokens,
    private readonly users: UserRepository,
    private readonly takeover: AccountTakeover,
    private readonly continuation: SignInContinuation,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
    private readonly hooks: SignInHooks,
    private readonly organizations: OrganizationSignIn,
  ) {}

  /**
   * A code is checked against the address's newest one, each check taking one of its 5 tries
   * first (so parallel guesses never get more); the 5th wrong one kills it. A link is redeemed
   * only with the verifier whose S256 challenge the request that sent it held; any try spends the
   * link, so a wrong verifier leaves it dead (the code still works). Success proves the address:
   * an unverified account is taken over (its password, factors, identities and sessions go), an
   * address without an account gets one when the realm's registration is open, and the sign-in
   * goes on as a login's (`amr` `["email"]`, the second step for users with MFA).
   * @throws DomainError INVALID_CREDENTIALS (every refusal alike) | ACCOUNT_LOCKED | ACCOUNT_SUSPENDED |
   *   INVALID_DPOP_PROOF | VALIDATION_FAILED (fingerprint)
   */
  async execute(input: EmailCodeSignInInput): Promise<SignInOutcome> {
    const { realm, client } = input;
    const { now, observation, dpopJkt } = await this.continuation.begin(client, input.dpop);
    const refuse = async (reason: string, token: OneTimeToken | null): Promise<never> => {
      const via = 'code' in input.proof ? 'code' : 'link';
      const user = token?.userId ? { id: token.userId } : null;
      await this.continuation.refused({ realm, client, method: 'email-code', details: { via }, user }, now, { reason });
      throw refusedAnswer();
    };

    const token =
      'code' in input.proof ? await this.checkCode(realm, input.proof, now, refuse) : await this.checkLink(realm, input.proof, now, refuse);
    const email = token.email!;
    // Before the code is spent: an address of an organization that requires its provider never signs in so.
    await this.organizations.assertOtherWaysAllowed({ realm, email, method: 'email-code', ip: client.ip });
    // An address without an account gets one: the realm's decision first, before anything is
    // written or spent (refused, the code stays as it was).
    if (realm.policy.registrationOpen && !(await this.users.findByEmail(realm.id, email))) {
      const { firstName, lastName } = splitName(newAccountName(email));
      const admitted = this.hooks.beforeRegistration({ realm, email, firstName, lastName, method: 'email-code', ip: client.ip });
      if (admitted) await admitted;
    }
    const user = await this.tx
      .run(async () => {
        // Code and link are one credential: whichever signs in spends both, once.
        if (!(await this.oneTimeTokens.consume(token.tokenHash, now))) return null;
        return this.accountFor(realm, email, client, now);
      })
      .catch((error: unknown) =>
        // Registered by someone else meanwhile: nothing was stored, the code still works (and takes that account over).
        error instanceof DomainError && error.code === 'EMAIL_ALREADY_REGISTERED'
          ? refuse('registered_meanwhile', token)
          : Promise.reject(error),
      );
    if (!user) return refuse(user === null ? 'used' : 'no_account', token);
    return this.continuation.continue({
      realm,
      user,
      client,
      observation,
      dpopJkt,
      amr: EMAIL_AMR,
      method: 'email-code',
      multiFactor: false,
    });
  }

  private async checkCode(
    realm: Realm,
    proof: { email: string; code: string },
    now: Date,
    refuse: (reason: string, token: OneTimeToken | null) => Promise<never>,
  ): Promise<OneTimeToken> {
    const email = Email.normalise(proof.email);
    // Only the newest code of an address counts: a newer request voids the older ones.
    const token = await this.oneTimeTokens.findLatestForEmail(realm.id, email, 'email_code');
    if (!token || token.usedAt || token.expiresAt <= now) {
      // The same work as a live code's first try, so the time does not tell whether an address has a code
      // (where registration is closed: an account).
      await this.oneTimeTokens.reserveAttempt(this.secureTokens.hash(`none:${email}`), now, EMAIL_CODE_MAX_ATTEMPTS);
      await this.secureTokens.keyedHash(emailCodeHashInput('', proof.code));
      return refuse(token ? 'expired_or_used' : 'no_code', token);
    }
    // The try is taken before the code is compared: at most 5 comparisons, however many arrive at once.
    const attempt = await this.oneTimeTokens.reserveAttempt(token.tokenHash, now, EMAIL_CODE_MAX_ATTEMPTS);
    if (attempt === null) return refuse('no_tries_left', token);
    const code = proof.code.replace(/[\s-]/g, '');
    const presented = await this.secureTokens.keyedHash(emailCodeHashInput(token.tokenHash, code));
    const stored = typeof token.payload.codeHash === 'string' ? token.payload.codeHash : '';
    if (code.length === EMAIL_CODE_DIGITS && /^\d+$/.test(code) && this.secureTokens.equal(presented, stored)) return token;
    if (attempt >= EMAIL_CODE_MAX_ATTEMPTS) await this.oneTimeTokens.consume(token.tokenHash, now);
    return refuse(attempt >= EMAIL_CODE_MAX_ATTEMPTS ? 'wrong_code_last_try' : 'wrong_code', token);
  }

  private async checkLink(
    realm: Realm,
    proof: { token: string; codeVerifier: string },
    now: Date,
    refuse: (reason: string, token: OneTimeToken | null) => Promise<never>,
  ): Promise<OneTimeToken> {
    const tokenHash = this.secureTokens.hash(proof.token);
    const token = await this.oneTimeTokens.find(tokenHash, 'email_code');
    if (!token || token.realmId !== realm.id) return refuse('unknown_link', null);
    const challenge = typeof token.payload.codeChallenge === 'string' ? token.payload.codeChallenge : null;
    if (!challenge) return refuse('no_link', token);
    // Any try spends the link, right verifier or wrong: exactly one can ever get past this.
    if (!(await this.oneTimeTokens.setPayloadFlag(tokenHash, LINK_SPENT, now))) return refuse('link_spent_or_expired', token);
    if (!this.secureTokens.equal(this.secureTokens.pkceChallenge(proof.codeVerifier), challenge)) return refuse('wrong_verifier', token);
    return token;
  }

  /**
   * The account the proven address signs in to: as it is when verified; taken over when not;
   * new when there is none and registration is open. Null (refused) for an unverified
   * administrator's account, which is never claimed automatically, or when registration is closed.
   */
  private async accountFor(realm: Realm, email: string, client: ClientContext, now: Date): Promise<User | false> {
    const found = await this.users.findByEmail(realm.id, email);
    // Held until the sign-in's transaction ends: a verification or role change meanwhile is seen, not overwritten.
    const existing = found && (await this.users.findByIdForUpdate(realm.id, found.id));
    if (existing) {
      if (existing.emailVerified) return existing;
      if (existing.isAdministrator()) return false;
      await this.takeover.execute({
        user: existing,
        now,
        ip: client.ip,
        event: { type: 'email.verified', details: { method: 'email-code' } },
      });
      return existing;
    }
    if (found) return false;
    if (!realm.policy.registrationOpen) return false;
    const user = User.register({
      id: crypto.randomUUID(),
      realmId: realm.id,
      email,
      name: newAccountName(email),
      passwordHash: null,
      emailVerified: true,
      now,
    });
    await this.users.insert(user);
    await this.audit.record({
      type: 'user.registered',
      realmId: realm.id,
      userId: user.id,
      ip: client.ip,
      at: now,
      details: { method: 'email-code' },
    });
    return user;
  }
}

/** The name an account made by an email code starts with: the address's local part. */
function newAccountName(email: string): string {
  return clipName(Email.parse(email).localPart);
}
