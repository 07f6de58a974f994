import { Invitation } from '../../domain/organization/invitation';

/** Invitations to organizations; their tokens are stored as hashes only. */
export abstract class OrganizationInvitationRepository {
  /**
   * Stores a pending invitation, after marking the organization's pending invitation to the same
   * address replaced (its link stops working); call inside a transaction.
   */
  abstract insertReplacingPending(invitation: Invitation, now: Date): Promise<void>;
  /** The invitation whose token hashes to `tokenHash`, whatever its state; null when none. */
  abstract findByTokenHash(tokenHash: string): Promise<Invitation | null>;
  /** The organization's pending, unexpired invitations, newest first. */
  abstract listPending(organizationId: string, now: Date): Promise<Invitation[]>;
  /** Marks it accepted if it is still pending and unexpired; exactly one of concurrent callers gets true. */
  abstract accept(id: string, now: Date): Promise<boolean>;
  /** Marks the organization's invitation revoked if it is still pending and unexpired; false otherwise. */
  abstract revoke(organizationId: string, id: string, now: Date): Promise<boolean>;
}
