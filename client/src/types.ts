/** A second factor a user can verify with. */
export type MfaMethod = 'totp' | 'webauthn';

/** The user as sign-in and MFA answers return it. */
export interface AuthUser {
  id: string;
  email: string;
  emailVerified: boolean;
  mfaEnabled?: boolean;
}

/** The user as `GET /me` returns it. */
export interface User {
  id: string;
  email: string;
  emailVerified: boolean;
  profile: { firstName: string; lastName: string; avatar: string | null };
  mfa: MfaSummary;
  status: 'active' | 'suspended' | 'locked';
  roles: string[];
  /** Set by administrators only. */
  appMetadata: Record<string, unknown>;
  /** False for an account made by an email code or an identity provider until it sets a password. */
  hasPassword: boolean;
  /** The accounts at identity providers linked to this one. */
  identities: { id: string; provider: string; email: string | null; linkedAt: string }[];
  createdAt: string;
  lastLoginAt: string | null;
}

export interface MfaSummary {
  enabled: boolean;
  methods: MfaMethod[];
}

export interface MfaStatus extends MfaSummary {
  /** `passkey`: registered as a passkey, it signs in on its own. */
  webauthnCredentials: {
    id: string;
    name: string;
    passkey: boolean;
    /** Its signature counter went back (a copy may exist): it no longer signs in until removed and registered again. */
    disabled: boolean;
    createdAt: string;
    lastUsedAt: string | null;
  }[];
  recoveryCodesRemaining: number;
}

export interface Session {
  id: string;
  userId: string;
  device: { id: string; name: string; type: 'browser' | 'mobile' | 'desktop' | 'api' | 'unknown'; fingerprint: string | null };
  ip: string;
  location: { country: string | null; city: string | null };
  status: 'active' | 'flagged';
  dpopBound?: boolean;
  flag: { reason: string; score: number; flaggedAt: string } | null;
  createdAt: string;
  lastActiveAt: string;
  expiresAt: string;
  /** The session of this client. */
  current: boolean;
}

/** An app the user let sign them in through the realm's OpenID provider. */
export interface GrantedApp {
  clientId: string;
  name: string;
  /** What it may access: the scopes granted (and the APIs, as resource scopes, when it asked for them). */
  scopes: string[];
  grantedAt: string;
  /** When it last used its grant (a token issued or refreshed); null when not yet. */
  lastUsedAt: string | null;
}

export interface TotpSetup {
  secret: string;
  otpauthUrl: string;
  /** A PNG data URL of the otpauth URL. */
  qrCode: string;
}

/** Why the client is signed out. */
export type SignOutReason =
  /** `signOut()` was called in this tab */
  | 'signed-out'
  /** another tab signed out */
  | 'other-tab'
  /** the session ended on the server (revoked, expired, password reset) */
  | 'session-ended'
  /** the session was flagged and the user has no second factor: sign in again */
  | 'reauthentication-required';

/** What a UI renders; a new object on every change (for `useSyncExternalStore`). */
export type AuthSnapshot =
  | {
      readonly status: 'loading';
      /**
       * Set while a restore waits to try again because the service could not answer (rate
       * limited, unreachable): when the next try starts, in milliseconds since the epoch. The
       * session may well be alive; show neither a sign-in form nor the account yet.
       */
      readonly retryAt?: number;
    }
  | { readonly status: 'signed-out'; readonly reason: SignOutReason | null }
  | {
      readonly status: 'mfa-required';
      /** `sign-in`: the second step of a sign-in; `step-up`: a refresh of a flagged session. */
      readonly reason: 'sign-in' | 'step-up';
      /** The user's factors when known (always after a sign-in). */
      readonly methods: readonly MfaMethod[] | null;
      /** The session the verification resumes (step-up only). */
      readonly sessionId: string | null;
    }
  | {
      readonly status: 'signed-in';
      /** From the sign-in answer; null after a reload until {@link IdentityClient.me} is called. */
      readonly user: AuthUser | null;
      readonly userId: string;
      readonly sessionId: string;
      /** Authentication methods of the access token (`pwd`, `otp`, `hwk`). */
      readonly amr: readonly string[];
      /** The user's realm roles as the access token carries them (updated at each refresh). */
      readonly roles: readonly string[];
      /** What administrators attached to the user, as the access token carries it; `{}` when none. */
      readonly appMetadata: Readonly<Record<string, unknown>>;
      /** The session's active organization and the user's roles in it (the token's `org` claim); null when none. */
      readonly organization: ActiveOrganization | null;
      /** When the access token expires, in milliseconds since the epoch (local clock). */
      readonly expiresAt: number;
    };

/** What `verifyEmail` did: confirmed the address, or (with `notMe`) took the account over for the mailbox's owner. */
export type EmailVerification = { kind: 'verified' } | { kind: 'disowned' };

export type SignInResult = { kind: 'signed-in'; user: AuthUser } | { kind: 'mfa-required'; user: AuthUser; methods: MfaMethod[] };

/** What a return from an identity provider ended in: a sign-in, or a link to the signed-in account. */
export type RedirectResult = SignInResult | { kind: 'linked'; provider: string; identity: LinkedIdentity };

/** The active organization as access tokens carry it (`org`). */
export interface ActiveOrganization {
  id: string;
  slug: string;
  /** The user's organization roles: `org-admin` and the realm's defined roles. */
  roles: string[];
}

/** One of the user's organizations (`GET /organizations`). */
export interface Membership extends ActiveOrganization {
  name: string;
}

/** A member, as an organization's administrators see them. */
export interface OrganizationMember {
  userId: string;
  email: string;
  roles: string[];
  joinedAt: string;
}

/** A pending invitation to an organization. */
export interface OrganizationInvitation {
  id: string;
  email: string;
  roles: string[];
  status: 'pending' | 'accepted' | 'revoked' | 'replaced' | 'expired';
  invitedBy: string;
  expiresAt: string;
  createdAt: string;
}

/** An identity provider of the realm, for a sign-in button (`GET /providers`). */
export interface IdentityProvider {
  alias: string;
  displayName: string;
}

/** An account at an identity provider, linked to the user. */
export interface LinkedIdentity {
  id: string;
  /** The provider's alias. */
  provider: string;
  /** The provider's `sub` for the account. */
  subject: string;
  /** The address the provider gave at the last sign-in. */
  email: string | null;
  linkedAt: string;
  lastUsedAt: string | null;
}

export type MfaVerification = { type: 'totp'; code: string } | { type: 'recovery'; code: string } | { type: 'webauthn' };

export interface ClientEvents {
  'signed-in': { user: AuthUser | null; sessionId: string };
  'token-refreshed': { sessionId: string; expiresAt: number };
  'signed-out': { reason: SignOutReason };
  'mfa-required': { reason: 'sign-in' | 'step-up'; methods: readonly MfaMethod[] | null; sessionId: string | null };
}
