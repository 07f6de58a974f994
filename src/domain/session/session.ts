import type { DeviceType } from './device-fingerprint';

export type { DeviceType } from './device-fingerprint';
export type SessionStatus = 'active' | 'flagged';

export interface SessionDevice {
  id: string;
  name: string;
  type: DeviceType;
  /** The fingerprint string as recorded at login, or null. */
  fingerprint: string | null;
}

export interface SessionFlag {
  reason: 'fingerprint_mismatch';
  score: number;
  flaggedAt: Date;
}

export interface SessionLocation {
  country: string | null;
  city: string | null;
}

export interface SessionLifetime {
  idleTimeoutSeconds: number;
  maxLifetimeSeconds: number;
}

export interface SessionState {
  id: string;
  realmId: string;
  userId: string;
  device: SessionDevice;
  /** What later uses are compared with: recorded at login or accepted at MFA re-verification. */
  referenceFingerprint: unknown;
  ip: string;
  location: SessionLocation;
  userAgent: string | null;
  /** RFC 8176 methods that authenticated this session, e.g. ["pwd","otp"]. */
  amr: string[];
  /** RFC 7638 thumbprint of the DPoP key the session is bound to, or null for an unbound session. */
  dpopJkt: string | null;
  status: SessionStatus;
  flag: SessionFlag | null;
  createdAt: Date;
  lastActiveAt: Date;
  /** Absolute end of the session (created + max lifetime). */
  maxExpiresAt: Date;
  revokedAt: Date | null;
  revokeReason: string | null;
  /** The organization the session acts in (its tokens' `org` claim), or null/absent for none. */
  activeOrganizationId?: string | null;
}

export class Session {
  private constructor(private state: SessionState) {}

  static open(input: {
    id: string;
    realmId: string;
    userId: string;
    device: SessionDevice;
    referenceFingerprint: unknown;
    ip: string;
    location: SessionLocation;
    userAgent: string | null;
    amr: string[];
    /** Binds the session to a DPoP key for its whole life. */
    dpopJkt?: string | null;
    now: Date;
    lifetime: SessionLifetime;
  }): Session {
    return new Session({
      id: input.id,
      realmId: input.realmId,
      userId: input.userId,
      device: input.device,
      referenceFingerprint: input.referenceFingerprint,
      ip: input.ip,
      location: input.location,
      userAgent: input.userAgent,
      amr: [...input.amr],
      dpopJkt: input.dpopJkt ?? null,
      status: 'active',
      flag: null,
      createdAt: input.now,
      lastActiveAt: input.now,
      maxExpiresAt: new Date(input.now.getTime() + input.lifetime.maxLifetimeSeconds * 1000),
      revokedAt: null,
      revokeReason: null,
    });
  }

  static restore(state: SessionState): Session {
    return new Session({ ...state });
  }

  get id(): string {
    return this.state.id;
  }
  get realmId(): string {
    return this.state.realmId;
  }
  get userId(): string {
    return this.state.userId;
  }
  get amr(): string[] {
    return [...this.state.amr];
  }
  get status(): SessionStatus {
    return this.state.status;
  }
  get flag(): SessionFlag | null {
    return this.state.flag;
  }
  get referenceFingerprint(): unknown {
    return this.state.referenceFingerprint;
  }
  get revokedAt(): Date | null {
    return this.state.revokedAt;
  }
  get dpopJkt(): string | null {
    return this.state.dpopJkt;
  }
  /** The organization its tokens carry as `org`, or null. */
  get activeOrganizationId(): string | null {
    return this.state.activeOrganizationId ?? null;
  }
  /** Its refresh and access tokens need proofs made with the DPoP key it is bound to. */
  get dpopBound(): boolean {
    return this.state.dpopJkt !== null;
  }
  /** Absolute end of the session, whatever its use. */
  get maxExpiresAt(): Date {
    return this.state.maxExpiresAt;
  }

  /**
   * When refresh stops working under the realm's current `lifetime`: the earliest of the idle
   * timeout, the absolute end set at sign-in, and creation plus the current maximum lifetime (so
   * a realm that shortens its sessions shortens those already open; one that lengthens them
   * lengthens only new ones).
   */
  expiresAt(lifetime: SessionLifetime): Date {
    const idleEnd = this.state.lastActiveAt.getTime() + lifetime.idleTimeoutSeconds * 1000;
    return new Date(Math.min(idleEnd, this.absoluteEnd(lifetime).getTime()));
  }

  /** The end whatever the use: the one set at sign-in, or sooner under a shortened maximum lifetime. */
  absoluteEnd(lifetime: SessionLifetime): Date {
    const maxEnd = this.state.createdAt.getTime() + lifetime.maxLifetimeSeconds * 1000;
    return new Date(Math.min(maxEnd, this.state.maxExpiresAt.getTime()));
  }

  /** Neither revoked nor past its idle timeout or absolute lifetime (see `expiresAt`). */
  isLive(now: Date, lifetime: SessionLifetime): boolean {
    return this.state.revokedAt === null && this.expiresAt(lifetime) > now;
  }

  /** A refresh used the session. */
  touch(now: Date, ip: string, location?: SessionLocation): void {
    this.state = { ...this.state, lastActiveAt: now, ip, location: location ?? this.state.location };
  }

  /** Ends the session; revoking an ended session changes nothing. */
  revoke(now: Date, reason: string): void {
    if (this.state.revokedAt) return;
    this.state = { ...this.state, revokedAt: now, revokeReason: reason };
  }

  /** A use whose fingerprint did not match the reference. */
  flagMismatch(score: number, now: Date): void {
    this.state = { ...this.state, status: 'flagged', flag: { reason: 'fingerprint_mismatch', score, flaggedAt: now } };
  }

  /** MFA re-verification: the flag clears and the verifying device becomes the reference. */
  clearFlag(referenceFingerprint: unknown, fingerprint: string | null, amr: string[]): void {
    this.state = {
      ...this.state,
      status: 'active',
      flag: null,
      referenceFingerprint,
      device: { ...this.state.device, fingerprint },
      amr: [...amr],
    };
  }

  snapshot(): SessionState {
    return {
      ...this.state,
      activeOrganizationId: this.state.activeOrganizationId ?? null,
      device: { ...this.state.device },
      location: { ...this.state.location },
      amr: [...this.state.amr],
    };
  }
}
