import { DomainError } from '../errors';

/** Slugs name an organization in its realm and in its members' tokens. */
export const ORGANIZATION_SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;
/** A lower-case DNS name of at least two labels. */
const DOMAIN_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;
export const MAX_ORGANIZATION_DOMAINS = 50;
const MAX_NAME = 100;

export interface OrganizationState {
  id: string;
  realmId: string;
  name: string;
  slug: string;
  /** Lower-case DNS names the administrator asserted are the organization's; each in at most one organization of the realm. */
  domains: string[];
  /** Alias of the realm's identity provider the organization signs in with, or null. */
  identityProvider: string | null;
  /** Addresses of its domains sign in only through `identityProvider`. */
  requireIdentityProvider: boolean;
  /** How many members it has (kept by the database with the memberships). */
  memberCount: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface OrganizationChange {
  name?: string;
  slug?: string;
  domains?: string[];
  identityProvider?: string | null;
  requireIdentityProvider?: boolean;
}

function checkName(name: unknown): string {
  const text = typeof name === 'string' ? name.trim() : '';
  if (text.length < 1 || text.length > MAX_NAME || /\p{Cc}/u.test(text)) {
    throw DomainError.validation('name', `must be 1–${MAX_NAME} characters without control characters`);
  }
  return text;
}

function checkSlug(slug: unknown): string {
  if (typeof slug !== 'string' || !ORGANIZATION_SLUG.test(slug))
    throw DomainError.validation('slug', 'must match ^[a-z0-9][a-z0-9-]{0,62}$');
  return slug;
}

/** @throws DomainError VALIDATION_FAILED (field `domains`) */
function checkDomains(domains: unknown): string[] {
  if (!Array.isArray(domains)) throw DomainError.validation('domains', 'must be an array of domain names');
  if (domains.length > MAX_ORGANIZATION_DOMAINS)
    throw DomainError.validation('domains', `must hold at most ${MAX_ORGANIZATION_DOMAINS} names`);
  const seen = new Set<string>();
  for (const domain of domains) {
    if (typeof domain !== 'string' || !DOMAIN_NAME.test(domain)) {
      throw DomainError.validation('domains', `must be lower-case DNS names (${JSON.stringify(domain)} is not)`);
    }
    if (seen.has(domain)) throw DomainError.validation('domains', `names "${domain}" twice`);
    seen.add(domain);
  }
  return [...seen];
}

/** @throws DomainError VALIDATION_FAILED when the provider is required but none is named */
function checkProvider(identityProvider: string | null, requireIdentityProvider: boolean): void {
  if (requireIdentityProvider && identityProvider === null) {
    throw DomainError.validation('requireIdentityProvider', 'needs an identityProvider');
  }
}

/** The domain part of an address, lower-cased; null for something that is no address. */
export function emailDomain(email: string): string | null {
  const at = email.lastIndexOf('@');
  return at > 0 && at < email.length - 1 ? email.slice(at + 1).toLowerCase() : null;
}

/** A customer company inside a realm: its members hold organization roles, never realm roles. */
export class Organization {
  private constructor(private state: OrganizationState) {}

  /** @throws DomainError VALIDATION_FAILED naming the field */
  static create(input: {
    id: string;
    realmId: string;
    name: string;
    slug: string;
    domains?: string[];
    identityProvider?: string | null;
    requireIdentityProvider?: boolean;
    createdAt: Date;
  }): Organization {
    const identityProvider = input.identityProvider ?? null;
    const requireIdentityProvider = input.requireIdentityProvider ?? false;
    checkProvider(identityProvider, requireIdentityProvider);
    return new Organization({
      id: input.id,
      realmId: input.realmId,
      name: checkName(input.name),
      slug: checkSlug(input.slug),
      domains: checkDomains(input.domains ?? []),
      identityProvider,
      requireIdentityProvider,
      memberCount: 0,
      createdAt: input.createdAt,
      updatedAt: input.createdAt,
    });
  }

  static restore(state: OrganizationState): Organization {
    return new Organization({ ...state, domains: [...state.domains] });
  }

  get id(): string {
    return this.state.id;
  }
  get realmId(): string {
    return this.state.realmId;
  }
  get name(): string {
    return this.state.name;
  }
  get slug(): string {
    return this.state.slug;
  }
  get domains(): string[] {
    return [...this.state.domains];
  }
  get identityProvider(): string | null {
    return this.state.identityProvider;
  }
  get requireIdentityProvider(): boolean {
    return this.state.requireIdentityProvider;
  }
  get memberCount(): number {
    return this.state.memberCount;
  }
  get createdAt(): Date {
    return this.state.createdAt;
  }
  get updatedAt(): Date {
    return this.state.updatedAt;
  }

  /**
   * Changes any field but the id; returns the names of the fields that changed.
   * @throws DomainError VALIDATION_FAILED naming the field
   */
  update(change: OrganizationChange, now: Date): string[] {
    const next: OrganizationState = {
      ...this.state,
      ...(change.name !== undefined ? { name: checkName(change.name) } : {}),
      ...(change.slug !== undefined ? { slug: checkSlug(change.slug) } : {}),
      ...(change.domains !== undefined ? { domains: checkDomains(change.domains) } : {}),
      ...(change.identityProvider !== undefined ? { identityProvider: change.identityProvider } : {}),
      ...(change.requireIdentityProvider !== undefined ? { requireIdentityProvider: change.requireIdentityProvider } : {}),
    };
    checkProvider(next.identityProvider, next.requireIdentityProvider);
    const changed = (['name', 'slug', 'domains', 'identityProvider', 'requireIdentityProvider'] as const).filter(
      (field) => JSON.stringify(next[field]) !== JSON.stringify(this.state[field]),
    );
    this.state = { ...next, updatedAt: changed.length > 0 ? now : this.state.updatedAt };
    return changed;
  }

  /** Whether an address belongs to one of its domains. */
  ownsAddress(email: string): boolean {
    const domain = emailDomain(email);
    return domain !== null && this.state.domains.includes(domain);
  }

  snapshot(): OrganizationState {
    return { ...this.state, domains: [...this.state.domains] };
  }
}

/** A user's membership: the organization roles they hold in it. */
export interface Membership {
  organizationId: string;
  realmId: string;
  userId: string;
  roles: string[];
  joinedAt: Date;
}
