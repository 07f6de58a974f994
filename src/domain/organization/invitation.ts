/** A stored invitation's state; `expired` is a pending one past its end. */
export type InvitationStatus = 'pending' | 'accepted' | 'revoked' | 'replaced' | 'expired';

export const INVITATION_TTL_SECONDS = 7 * 24 * 3600;

export interface InvitationState {
  id: string;
  organizationId: string;
  realmId: string;
  /** The invited address, normalised. */
  email: string;
  /** The organization roles the invitee gets on accepting. */
  roles: string[];
  /** SHA-256 of the link's token: the token itself is never stored. */
  tokenHash: string;
  /** The user who invited (an administrator or an org-admin). */
  invitedBy: string;
  status: Exclude<InvitationStatus, 'expired'>;
  createdAt: Date;
  expiresAt: Date;
  /** When it was accepted, revoked or replaced. */
  endedAt: Date | null;
}

/** An invitation to join an organization, sent by email; single use, valid 7 days, replaced by a newer one to the same address. */
export class Invitation {
  private constructor(private readonly state: InvitationState) {}

  static issue(input: {
    id: string;
    organizationId: string;
    realmId: string;
    email: string;
    roles: string[];
    tokenHash: string;
    invitedBy: string;
    now: Date;
  }): Invitation {
    const { now, ...fields } = input;
    return new Invitation({
      ...fields,
      roles: [...new Set(input.roles)],
      status: 'pending',
      createdAt: now,
      expiresAt: new Date(now.getTime() + INVITATION_TTL_SECONDS * 1000),
      endedAt: null,
    });
  }

  static restore(state: InvitationState): Invitation {
    return new Invitation({ ...state, roles: [...state.roles] });
  }

  get id(): string {
    return this.state.id;
  }
  get organizationId(): string {
    return this.state.organizationId;
  }
  get realmId(): string {
    return this.state.realmId;
  }
  get email(): string {
    return this.state.email;
  }
  get roles(): string[] {
    return [...this.state.roles];
  }
  get tokenHash(): string {
    return this.state.tokenHash;
  }
  get invitedBy(): string {
    return this.state.invitedBy;
  }
  get createdAt(): Date {
    return this.state.createdAt;
  }
  get expiresAt(): Date {
    return this.state.expiresAt;
  }

  statusAt(now: Date): InvitationStatus {
    return this.state.status === 'pending' && this.state.expiresAt <= now ? 'expired' : this.state.status;
  }

  /** Still redeemable: pending and unexpired. */
  isPendingAt(now: Date): boolean {
    return this.statusAt(now) === 'pending';
  }

  snapshot(): InvitationState {
    return { ...this.state, roles: [...this.state.roles] };
  }
}
