import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { Email } from '../../domain/user/email';
import { User } from '../../domain/user/user';
import { AuditLog } from '../ports/audit-log';
import { OrganizationSignIn } from '../organizations/organization-sign-in';
import { Clock } from '../ports/clock';
import { PasswordHasher } from '../ports/password-hasher';
import { Transaction } from '../ports/transaction';
import { FailedLoginOutcome, UserRepository } from '../ports/user.repository';
import { ClientContext } from '../sign-in/client-context';
import { accountLocked, recordWrongPassword } from '../sign-in/wrong-password';
import { DpopRequest } from '../sign-in/dpop-binding';
import { SignInContinuation, SignInOutcome } from '../sign-in/sign-in-continuation';

export interface LoginInput {
  realm: Realm;
  email: string;
  password: string;
  client: ClientContext;
  /** The request's DPoP proof: a valid one binds the new session to its key. */
  dpop?: DpopRequest | null;
  /** The OpenID provider's client the sign-in is for (its sign-in page), for the realm's hooks. */
  clientId?: string;
}

export type LoginResult = SignInOutcome;

const invalidCredentials = () => new DomainError('INVALID_CREDENTIALS', 'Invalid email or password');

@Injectable()
export class LoginUseCase {
  constructor(
    private readonly users: UserRepository,
    private readonly hasher: PasswordHasher,
    private readonly continuation: SignInContinuation,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
    private readonly organizations: OrganizationSignIn,
  ) {}

  /**
   * Password login. Unknown email and wrong password fail alike, in the same time.
   * @throws DomainError SSO_REQUIRED | INVALID_CREDENTIALS | ACCOUNT_SUSPENDED | ACCOUNT_LOCKED | EMAIL_NOT_VERIFIED | VALIDATION_FAILED |
   *   INVALID_DPOP_PROOF
   */
  async execute(input: LoginInput): Promise<LoginResult> {
    // Before the user is looked up: a bad proof is refused alike for every email and password.
    const { observation, dpopJkt } = await this.continuation.begin(input.client, input.dpop);
    const { realm, client } = input;
    const user = await this.users.findByEmail(realm.id, Email.normalise(input.email));
    // Before the password is checked: right or wrong, known address or not, the same answer.
    await this.organizations.assertOtherWaysAllowed({ realm, email: input.email, user, method: 'password', ip: client.ip });
    if (!user || !user.passwordHash) {
      await this.hasher.verifyDummy(input.password);
      await this.refused(realm, user?.id ?? null, client, this.clock.now(), { reason: user ? 'no_password' : 'unknown_user' });
      throw invalidCredentials();
    }
    const passwordMatches = await this.hasher.verify(input.password, user.passwordHash);
    const now = this.clock.now();
    const status = user.statusAt(now);
    // While locked, right and wrong passwords get the same 423 (accountLocked).
    if (status === 'locked') {
      await this.refused(realm, user.id, client, now, { reason: 'locked', passwordMatched: passwordMatches });
      throw accountLocked(user, now);
    }
    if (!passwordMatches) {
      // Not counted: locked by concurrent attempts while this password was checked, or suspended.
      if (!(await this.recordFailure(realm, user, client, now))) await this.refuseIfLocked(realm, user.id, now);
      throw invalidCredentials();
    }
    return this.continuation.continue({
      realm,
      user,
      client,
      observation,
      amr: ['pwd'],
      method: 'password',
      multiFactor: false,
      provenDetails: { passwordMatched: true },
      provenPasswordHash: user.passwordHash,
      dpopJkt,
      clientId: input.clientId,
    });
  }

  /** ACCOUNT_LOCKED when the account is locked now. */
  private async refuseIfLocked(realm: Realm, userId: string, now: Date): Promise<void> {
    const current = await this.users.findById(realm.id, userId);
    if (current?.statusAt(now) === 'locked') throw accountLocked(current, now);
  }

  /** Audits a login refused without counting towards the lockout (unknown user, locked, suspended). */
  private refused(realm: Realm, userId: string | null, client: ClientContext, at: Date, details: Record<string, unknown>): Promise<void> {
    return this.audit.record({
      type: 'login.failed',
      realmId: realm.id,
      userId,
      ip: client.ip,
      at,
      details: { method: 'password', ...details },
    });
  }

  private recordFailure(realm: Realm, user: User, client: ClientContext, now: Date): Promise<FailedLoginOutcome | null> {
    const { users, audit, tx } = this;
    return recordWrongPassword(
      { users, audit, tx },
      { realm, userId: user.id, ip: client.ip, at: now, details: { method: 'password', reason: 'wrong_password' } },
    );
  }
}
