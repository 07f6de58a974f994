import { DomainError } from '../errors';
import { MASTER_REALM } from '../realm/master-realm';
import type { LockoutSettings } from '../realm/realm-settings';
import { assertRoleName, REALM_ADMIN, SUPER_ADMIN } from '../role/role-names';
import { AppMetadata, parseAppMetadata } from './app-metadata';
import { Email } from './email';

export type UserStatus = 'active' | 'suspended' | 'locked';
export type MfaMethod = 'totp' | 'webauthn';

export interface UserProfile {
  firstName: string;
  lastName: string;
  avatar: string | null;
}

export interface UserState {
  id: string;
  realmId: string;
  email: string;
  emailVerified: boolean;
  /** bcrypt hash of the pre-hashed password; null until an invited user sets one. */
  passwordHash: string | null;
  profile: UserProfile;
  /** Stored status; a lock whose time has passed reads as `active` (see `statusAt`). */
  status: UserStatus;
  lockedUntil: Date | null;
  failedLoginCount: number;
  roles: string[];
  /** Set by administrators only; carried by access tokens as `app_metadata`. */
  appMetadata: AppMetadata;
  mfaMethods: MfaMethod[];
  /**
   * Whether an identity-provider account is linked, as read with the user; absent when the read
   * did not tell (the identities are then looked up).
   */
  linkedIdentities?: boolean;
  createdAt: Date;
  updatedAt: Date;
  lastLoginAt: Date | null;
}

/**
 * What a list of users shows of each: profile, roles, MFA methods, status and sign-in dates;
 * no credentials, and nothing to change and save (that takes a `User`).
 */
export type UserSummary = Readonly<
  Pick<
    UserState,
    | 'id'
    | 'email'
    | 'emailVerified'
    | 'profile'
    | 'status'
    | 'lockedUntil'
    | 'roles'
    | 'appMetadata'
    | 'mfaMethods'
    | 'linkedIdentities'
    | 'createdAt'
    | 'lastLoginAt'
  > & {
    /** False for accounts made by an identity provider or an email code until a password is set. */
    hasPassword: boolean;
  }
>;

/** The status as of `now`: a temporary lock that has run out reads as active. */
export function statusAt(user: Pick<UserState, 'status' | 'lockedUntil'>, now: Date): UserStatus {
  if (user.status === 'locked' && user.lockedUntil && user.lockedUntil <= now) return 'active';
  return user.status;
}

/** MFA is on while at least one method is enrolled. */
export function hasMfa(user: Pick<UserState, 'mfaMethods'>): boolean {
  return user.mfaMethods.length > 0;
}

/** How many wrong passwords lock an account, and for how long: the realm's lockout settings. */
export type LockoutPolicy = LockoutSettings;

/** Names are counted in code points, as people count characters: an emoji is one, not two. */
export const MAX_NAME_LENGTH = 100;

/**
 * A name trimmed, at most `MAX_NAME_LENGTH` code points long (at least one when `required`),
 * without control characters.
 * @throws DomainError VALIDATION_FAILED naming `field`
 */
function personName(field: 'name' | 'firstName' | 'lastName', value: string, required: boolean): string {
  const trimmed = value.trim();
  const length = [...trimmed].length;
  if (length > MAX_NAME_LENGTH || (required && length < 1)) {
    throw DomainError.validation(
      field,
      required ? `must be 1 to ${MAX_NAME_LENGTH} characters` : `must be at most ${MAX_NAME_LENGTH} characters`,
    );
  }
  if (/[\p{Cc}]/u.test(trimmed)) throw DomainError.validation(field, 'must not contain control characters');
  return trimmed;
}

/** The first `MAX_NAME_LENGTH` code points of `text`, for a name taken from elsewhere (an address's local part). */
export function clipName(text: string): string {
  return [...text].slice(0, MAX_NAME_LENGTH).join('');
}

/**
 * `name` at register splits at its first space.
 * @throws DomainError VALIDATION_FAILED unless 1 to `MAX_NAME_LENGTH` code points without control characters
 */
export function splitName(name: string): { firstName: string; lastName: string } {
  const trimmed = personName('name', name, true);
  const space = trimmed.indexOf(' ');
  return space < 0
    ? { firstName: trimmed, lastName: '' }
    : { firstName: trimmed.slice(0, space), lastName: trimmed.slice(space + 1).trim() };
}

/** A change of one's own profile: omitted fields stay as they are. */
export interface ProfileChanges {
  firstName?: string;
  lastName?: string;
  avatar?: string | null;
}

const MAX_AVATAR_LENGTH = 2048;

function avatarUrl(value: string | null): string | null {
  if (value === null) return null;
  const trimmed = value.trim();
  let url: URL | null = null;
  try {
    url = new URL(trimmed);
  } catch {
    url = null;
  }
  if (!url || url.protocol !== 'https:' || !url.hostname) throw DomainError.validation('avatar', 'must be an https URL');
  // Credentials in an address shown to others would leak them.
  if (url.username || url.password) throw DomainError.validation('avatar', 'must not contain credentials');
  if (trimmed.length > MAX_AVATAR_LENGTH) throw DomainError.validation('avatar', `must be at most ${MAX_AVATAR_LENGTH} characters`);
  return url.href;
}

export class User {
  private constructor(private state: UserState) {}

  /**
   * Creates a user with status active and no roles unless given.
   * @throws DomainError VALIDATION_FAILED for a malformed email or name
   */
  static register(input: {
    id: string;
    realmId: string;
    email: string;
    name: string;
    passwordHash: string | null;
    emailVerified?: boolean;
    roles?: string[];
    now: Date;
  }): User {
    const email = Email.parse(input.email);
    const { firstName, lastName } = splitName(input.name);
    return new User({
      id: input.id,
      realmId: input.realmId,
      email: email.value,
      emailVerified: input.emailVerified ?? false,
      passwordHash: input.passwordHash,
      profile: { firstName, lastName, avatar: null },
      status: 'active',
      lockedUntil: null,
      failedLoginCount: 0,
      roles: [...new Set(input.roles ?? [])],
      appMetadata: {},
      mfaMethods: [],
      createdAt: input.now,
      updatedAt: input.now,
      lastLoginAt: null,
    });
  }

  static restore(state: UserState): User {
    return new User({
      ...state,
      profile: { ...state.profile },
      roles: [...state.roles],
      mfaMethods: [...state.mfaMethods],
    });
  }

  get id(): string {
    return this.state.id;
  }
  get realmId(): string {
    return this.state.realmId;
  }
  get email(): string {
    return this.state.email;
  }
  get emailVerified(): boolean {
    return this.state.emailVerified;
  }
  get passwordHash(): string | null {
    return this.state.passwordHash;
  }
  get hasPassword(): boolean {
    return this.state.passwordHash !== null;
  }
  /** Whether an identity-provider account is linked; null when the read that made this user did not tell. */
  get linkedIdentities(): boolean | null {
    return this.state.linkedIdentities ?? null;
  }
  get profile(): UserProfile {
    return { ...this.state.profile };
  }
  get roles(): string[] {
    return [...this.state.roles];
  }
  /** Holds `super-admin` in `master`: administers every realm. */
  isSuperAdmin(): boolean {
    return this.state.realmId === MASTER_REALM && this.state.roles.includes(SUPER_ADMIN);
  }

  /**
   * Holds `realm-admin` or `super-admin`. An administrator's account is never linked to an
   * identity provider automatically nor taken over, and an unverified one cannot sign in by
   * email code: whoever controls such an account controls others.
   */
  isAdministrator(): boolean {
    return this.state.roles.includes(REALM_ADMIN) || this.state.roles.includes(SUPER_ADMIN);
  }
  get appMetadata(): AppMetadata {
    return this.state.appMetadata;
  }
  get mfaMethods(): MfaMethod[] {
    return [...this.state.mfaMethods];
  }
  get mfaEnabled(): boolean {
    return hasMfa(this.state);
  }
  get createdAt(): Date {
    return this.state.createdAt;
  }
  get lastLoginAt(): Date | null {
    return this.state.lastLoginAt;
  }
  get failedLoginCount(): number {
    return this.state.failedLoginCount;
  }
  get lockedUntil(): Date | null {
    return this.state.lockedUntil;
  }

  /** The status as of `now`: a temporary lock that has run out reads as active. */
  statusAt(now: Date): UserStatus {
    return statusAt(this.state, now);
  }

  /** Seconds until a temporary lock lifts; null when not locked or locked until unlocked. */
  lockRemainingSeconds(now: Date): number | null {
    if (this.statusAt(now) !== 'locked' || !this.state.lockedUntil) return null;
    return Math.max(1, Math.ceil((this.state.lockedUntil.getTime() - now.getTime()) / 1000));
  }

  /**
   * Whether the user may hold sessions and obtain tokens at `now`.
   */
  canAuthenticate(now: Date): boolean {
    return this.statusAt(now) === 'active';
  }

  /**
   * Counts a wrong password; the `maxFailures`-th consecutive one locks the account.
   * Repositories apply the same rule atomically (`UserRepository.recordFailedLogin`).
   */
  recordFailedLogin(now: Date, policy: LockoutPolicy): void {
    if (this.statusAt(now) !== 'active') return;
    const failures = (this.state.status === 'locked' ? 0 : this.state.failedLoginCount) + 1;
    const locks = failures >= policy.maxFailures;
    this.state = {
      ...this.state,
      failedLoginCount: failures,
      status: locks ? 'locked' : 'active',
      lockedUntil: locks && policy.durationSeconds > 0 ? new Date(now.getTime() + policy.durationSeconds * 1000) : null,
      updatedAt: now,
    };
  }

  /** A successful login resets the failure counter. */
  recordSuccessfulLogin(now: Date): void {
    if (!this.canAuthenticate(now)) throw new DomainError('INVALID_USER_STATE', `A ${this.statusAt(now)} account cannot sign in`);
    this.state = { ...this.state, failedLoginCount: 0, lastLoginAt: now, updatedAt: now };
    if (this.state.status === 'locked') this.state = { ...this.state, status: 'active', lockedUntil: null };
  }

  /**
   * active or locked → suspended.
   * @throws DomainError INVALID_USER_STATE when already suspended
   */
  suspend(now: Date): void {
    this.assertStatus(now, ['active', 'locked'], 'suspend');
    this.state = { ...this.state, status: 'suspended', lockedUntil: null, failedLoginCount: 0, updatedAt: now };
  }

  /**
   * suspended → active.
   * @throws DomainError INVALID_USER_STATE unless suspended
   */
  activate(now: Date): void {
    this.assertStatus(now, ['suspended'], 'activate');
    this.state = { ...this.state, status: 'active', updatedAt: now };
  }

  /**
   * locked → active, failure counter reset.
   * @throws DomainError INVALID_USER_STATE unless locked
   */
  unlock(now: Date): void {
    this.assertStatus(now, ['locked'], 'unlock');
    this.state = { ...this.state, status: 'active', lockedUntil: null, failedLoginCount: 0, updatedAt: now };
  }

  changePasswordHash(passwordHash: string, now: Date): void {
    this.state = { ...this.state, passwordHash, updatedAt: now };
  }

  verifyEmail(now: Date): void {
    this.state = { ...this.state, emailVerified: true, updatedAt: now };
  }

  /**
   * The address was just proven by someone who is not known to be whoever made this account
   * (an identity provider, an email code) while the account never proved it: whatever a squatter
   * could have set up is void. The password goes, the email becomes verified, the failure count
   * and a lock it caused are reset, and no second factor remains (the caller deletes them, their
   * identities and sessions in the same transaction). The profile is the squatter's too: it
   * becomes what an account made by an email code starts with (the address's local part as first
   * name, no last name, no avatar) until whoever proved the address gives theirs. A suspension stays.
   * @throws DomainError INVALID_USER_STATE when the email is already verified (nothing to take
   *   over) or the account holds an administrator role (never claimed automatically)
   */
  takeOver(now: Date): void {
    if (this.state.emailVerified) throw new DomainError('INVALID_USER_STATE', 'A verified account cannot be taken over');
    if (this.isAdministrator()) {
      throw new DomainError('INVALID_USER_STATE', 'An administrator account cannot be taken over');
    }
    const wasLocked = this.state.status === 'locked';
    this.state = {
      ...this.state,
      passwordHash: null,
      emailVerified: true,
      failedLoginCount: 0,
      mfaMethods: [],
      profile: { firstName: clipName(Email.parse(this.state.email).localPart), lastName: '', avatar: null },
      ...(wasLocked ? { status: 'active' as const, lockedUntil: null } : {}),
      updatedAt: now,
    };
  }

  /**
   * Replaces the realm roles. Whether the realm has them is the caller's to check.
   * @throws DomainError VALIDATION_FAILED for a malformed role name
   */
  setRoles(roles: string[], now: Date): void {
    for (const role of roles) assertRoleName(role, 'roles');
    this.state = { ...this.state, roles: [...new Set(roles)], updatedAt: now };
  }

  /**
   * Changes the user's own name and avatar: names trimmed, 0 to 100 characters each, at least one
   * of them not empty; the avatar an https URL or null. Returns the fields that changed.
   * @throws DomainError VALIDATION_FAILED naming the field
   */
  updateProfile(changes: ProfileChanges, now: Date): (keyof UserProfile)[] {
    const next: UserProfile = { ...this.state.profile };
    if (changes.firstName !== undefined) next.firstName = personName('firstName', changes.firstName, false);
    if (changes.lastName !== undefined) next.lastName = personName('lastName', changes.lastName, false);
    if (changes.avatar !== undefined) next.avatar = avatarUrl(changes.avatar);
    if (!next.firstName && !next.lastName) {
      throw DomainError.validation(
        changes.firstName !== undefined ? 'firstName' : 'lastName',
        'firstName and lastName must not both be empty',
      );
    }
    const changed = (['firstName', 'lastName', 'avatar'] as const).filter((field) => next[field] !== this.state.profile[field]);
    if (changed.length > 0) this.state = { ...this.state, profile: next, updatedAt: now };
    return changed;
  }

  /**
   * Replaces the app metadata; `{}` clears it.
   * @throws DomainError VALIDATION_FAILED unless a JSON object of at most 1 KiB serialised, nested at most 3 levels
   */
  setAppMetadata(metadata: unknown, now: Date): void {
    this.state = { ...this.state, appMetadata: parseAppMetadata(metadata), updatedAt: now };
  }

  setMfaMethods(methods: MfaMethod[]): void {
    this.state = { ...this.state, mfaMethods: [...new Set(methods)].sort() as MfaMethod[] };
  }

  snapshot(): UserState {
    return User.restore(this.state).state;
  }

  summary(): UserSummary {
    const { id, email, emailVerified, profile, status, lockedUntil, roles, appMetadata, mfaMethods, createdAt, lastLoginAt, passwordHash } =
      this.snapshot();
    return {
      id,
      email,
      emailVerified,
      profile,
      status,
      lockedUntil,
      roles,
      appMetadata,
      mfaMethods,
      createdAt,
      lastLoginAt,
      hasPassword: passwordHash !== null,
    };
  }

  private assertStatus(now: Date, allowed: UserStatus[], action: string): void {
    const current = this.statusAt(now);
    if (!allowed.includes(current)) {
      throw new DomainError('INVALID_USER_STATE', `Cannot ${action} a user whose status is ${current}`);
    }
  }
}
