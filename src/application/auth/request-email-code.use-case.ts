import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { Email } from '../../domain/user/email';
import { Clock } from '../ports/clock';
import { OneTimeTokenRepository } from '../ports/one-time-token.repository';
import { SecureTokens } from '../ports/secure-tokens';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';
import { AccountEmails } from '../account/account-emails';
import { EMAIL_CODE_DIGITS, EMAIL_CODE_TTL_SECONDS, emailCodeHashInput } from '../account/email-codes';
import { ReturnUrls } from '../account/return-urls';

/** RFC 7636 S256: the base64url SHA-256 of a 43–128 character verifier, so exactly 43 characters. */
const CODE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export interface EmailCodeRequest {
  realm: Realm;
  email: string;
  /** Where the link sends the browser back; with `codeChallenge`, the email also holds a link. */
  returnTo?: string;
  codeChallenge?: string;
}

/** A request checked, with the work that answers it (run after the response: see `execute`). */
export interface AcceptedEmailCodeRequest {
  send(): Promise<void>;
}

/** POST /email-code: an 8-digit sign-in code by email, and a link bound to the browser that asked. */
@Injectable()
export class RequestEmailCodeUseCase {
  constructor(
    private readonly users: UserRepository,
    private readonly oneTimeTokens: OneTimeTokenRepository,
    private readonly secureTokens: SecureTokens,
    private readonly emails: AccountEmails,
    private readonly returnUrls: ReturnUrls,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Checks the request alone (the same answer for every address) and returns the work that
   * follows: the caller answers first and runs `send` after, so the answer's timing says nothing
   * about the address. `send` emails a code when the address has an account of the realm or the
   * realm's registration is open; the code and the link are one credential (one token row),
   * valid 10 minutes, and a new request voids the address's older ones. For an address that gets
   * no email, `send` does the same work and rolls it back: on the embedded database that work
   * runs on the service's only thread and holds its only session, so an address that cost less
   * would answer the request after it sooner.
   * @throws DomainError VALIDATION_FAILED (email, returnTo, codeChallenge)
   */
  execute(input: EmailCodeRequest): AcceptedEmailCodeRequest {
    const email = Email.parse(input.email);
    if ((input.returnTo === undefined) !== (input.codeChallenge === undefined)) {
      const missing = input.returnTo === undefined ? 'returnTo' : 'codeChallenge';
      throw DomainError.validation(missing, 'must be given with ' + (missing === 'returnTo' ? 'codeChallenge' : 'returnTo'));
    }
    const returnTo = input.returnTo === undefined ? null : this.returnUrls.assertAllowed(input.realm, input.returnTo);
    if (input.codeChallenge !== undefined && !CODE_CHALLENGE.test(input.codeChallenge)) {
      throw DomainError.validation('codeChallenge', 'must be the base64url SHA-256 of the code verifier (43 characters, S256)');
    }
    const link = returnTo && input.codeChallenge ? { returnTo, codeChallenge: input.codeChallenge } : null;
    return { send: () => this.send(input.realm, email.value, link) };
  }

  private async send(realm: Realm, email: string, link: { returnTo: string; codeChallenge: string } | null): Promise<void> {
    const now = this.clock.now();
    const code = this.secureTokens.numericCode(EMAIL_CODE_DIGITS);
    const token = this.secureTokens.generate();
    const tokenHash = this.secureTokens.hash(token);
    // Outside the transaction: the first use writes the HMAC key, which must not roll back with it.
    const codeHash = await this.secureTokens.keyedHash(emailCodeHashInput(tokenHash, code));
    await this.tx
      .run(async () => {
        const user = await this.users.findByEmail(realm.id, email);
        await this.oneTimeTokens.voidUnusedForEmail(realm.id, email, 'email_code', now);
        await this.oneTimeTokens.insert({
          tokenHash,
          realmId: realm.id,
          userId: user?.id ?? null,
          kind: 'email_code',
          email,
          payload: { codeHash, ...(link ? { codeChallenge: link.codeChallenge } : {}) },
          attempts: 0,
          createdAt: now,
          expiresAt: new Date(now.getTime() + EMAIL_CODE_TTL_SECONDS * 1000),
          usedAt: null,
        });
        await this.emails.sendSignInCode(
          realm,
          email,
          code,
          EMAIL_CODE_TTL_SECONDS / 60,
          link ? withEmailToken(link.returnTo, token) : null,
        );
        // No account and closed registration: nothing is sent, after the same statements.
        if (!user && !realm.policy.registrationOpen) throw NOTHING_TO_SEND;
      })
      .catch((error: unknown) => {
        if (error !== NOTHING_TO_SEND) throw error;
      });
  }
}

/** Thrown to roll back the work done for an address that gets no email. */
const NOTHING_TO_SEND = Symbol('nothing to send');

/** `returnTo` with `email_token` added to its query, keeping the query it has. */
function withEmailToken(returnTo: string, token: string): string {
  const url = new URL(returnTo);
  url.searchParams.set('email_token', token);
  return url.toString();
}
