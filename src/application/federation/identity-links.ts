import { Injectable } from '@nestjs/common';
import { IdentityProvider } from '../../domain/federation/identity-provider';
import { LinkedIdentity } from '../../domain/federation/linked-identity';
import { Realm } from '../../domain/realm/realm';
import { User } from '../../domain/user/user';
import { AccountEmails } from '../account/account-emails';
import { AuditLog } from '../ports/audit-log';
import { LinkedIdentityRepository } from '../ports/linked-identity.repository';

/** The provider's account being linked: its `sub` and the address it gave. */
export interface ProviderAccountRef {
  subject: string;
  email: string | null;
}

/** Stores a link between a user and an account at an identity provider, the one way every path does it. */
@Injectable()
export class IdentityLinks {
  constructor(
    private readonly identities: LinkedIdentityRepository,
    private readonly emails: AccountEmails,
    private readonly audit: AuditLog,
  ) {}

  /**
   * Links the account to `user` (call it inside the transaction that decided the link), audited
   * `identity.linked` unless `details` is null (a takeover audited it). When the user has a
   * password the link is a new way into an account someone already had, and its owner is told.
   * @throws IdentityInUseError when the (provider, subject) is already linked
   */
  async link(
    realm: Realm,
    provider: IdentityProvider,
    account: ProviderAccountRef,
    user: User,
    context: { ip: string | null; now: Date; sessionId?: string },
    details: Record<string, unknown> | null,
  ): Promise<LinkedIdentity> {
    const { ip, now } = context;
    const identity: LinkedIdentity = {
      id: crypto.randomUUID(),
      realmId: realm.id,
      userId: user.id,
      providerId: provider.id,
      provider: provider.alias,
      subject: account.subject,
      email: account.email,
      linkedAt: now,
      lastUsedAt: now,
    };
    await this.identities.insert(identity);
    if (details) {
      await this.audit.record({
        type: 'identity.linked',
        realmId: realm.id,
        userId: user.id,
        sessionId: context.sessionId,
        ip,
        at: now,
        details: { provider: provider.alias, subject: account.subject, identityId: identity.id, ...details },
      });
    }
    if (user.hasPassword) {
      await this.emails.sendSecurityNotice(
        realm,
        user,
        `Your account at ${provider.displayName} was linked to your account: it now signs you in without your password.`,
      );
    }
    return identity;
  }
}
