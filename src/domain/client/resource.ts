import { DomainError } from '../errors';
import { assertResourceIdentifier } from './client-uris';
import { assertAccessTokenTtl, assertName, STANDARD_SCOPES } from './client-rules';

/** Scope names of a resource. */
const SCOPE_NAME = /^[a-z][a-z0-9:._-]{0,63}$/;
export const MAX_RESOURCE_SCOPES = 50;
const MAX_SCOPE_DESCRIPTION = 200;

export interface ResourceScope {
  name: string;
  description: string;
}

export interface ResourceState {
  id: string;
  realmId: string;
  /** The API's identifier: the RFC 8707 `resource` and the `aud` of its tokens. Never changes. */
  identifier: string;
  name: string;
  scopes: ResourceScope[];
  /** Lifetime of its access tokens when the client sets none; null: the realm's. */
  accessTokenTtlSeconds: number | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface ResourceChange {
  name?: string;
  scopes?: { name: string; description?: string | null }[];
  accessTokenTtlSeconds?: number | null;
}

/**
 * Scope names `^[a-z][a-z0-9:._-]{0,63}$`, unique, none of the OpenID scopes every client may
 * have (a resource's `email` would be read as the user's address); descriptions at most 200
 * characters without control characters.
 * @throws DomainError VALIDATION_FAILED (field `scopes`)
 */
function checkScopes(scopes: readonly { name: string; description?: string | null }[]): ResourceScope[] {
  if (scopes.length > MAX_RESOURCE_SCOPES) throw DomainError.validation('scopes', `must hold at most ${MAX_RESOURCE_SCOPES} scopes`);
  const seen = new Set<string>();
  return scopes.map(({ name, description }) => {
    if (typeof name !== 'string' || !SCOPE_NAME.test(name)) {
      throw DomainError.validation('scopes', `names must match ^[a-z][a-z0-9:._-]{0,63}$ (${JSON.stringify(name)} does not)`);
    }
    if ((STANDARD_SCOPES as readonly string[]).includes(name)) {
      throw DomainError.validation('scopes', `"${name}" is an OpenID scope every client may have; name the API's scopes otherwise`);
    }
    if (seen.has(name)) throw DomainError.validation('scopes', `names "${name}" twice`);
    seen.add(name);
    const text = (description ?? '').trim();
    if (text.length > MAX_SCOPE_DESCRIPTION || /\p{Cc}/u.test(text)) {
      throw DomainError.validation('scopes', `descriptions must be at most ${MAX_SCOPE_DESCRIPTION} characters without control characters`);
    }
    return { name, description: text };
  });
}

/** An API of the realm that access tokens are for (RFC 8707, RFC 9068), with the scopes it knows. */
export class Resource {
  private constructor(private state: ResourceState) {}

  /** @throws DomainError VALIDATION_FAILED naming the field */
  static create(input: {
    id: string;
    realmId: string;
    identifier: string;
    name: string;
    scopes?: { name: string; description?: string | null }[];
    accessTokenTtlSeconds?: number | null;
    createdAt: Date;
  }): Resource {
    return new Resource({
      id: input.id,
      realmId: input.realmId,
      identifier: assertResourceIdentifier(input.identifier),
      name: assertName(input.name),
      scopes: checkScopes(input.scopes ?? []),
      accessTokenTtlSeconds: assertAccessTokenTtl(input.accessTokenTtlSeconds ?? null),
      createdAt: input.createdAt,
      updatedAt: input.createdAt,
    });
  }

  static restore(state: ResourceState): Resource {
    return new Resource({ ...state, scopes: state.scopes.map((s) => ({ ...s })) });
  }

  get id(): string {
    return this.state.id;
  }
  get realmId(): string {
    return this.state.realmId;
  }
  get identifier(): string {
    return this.state.identifier;
  }
  get name(): string {
    return this.state.name;
  }
  get scopes(): ResourceScope[] {
    return this.state.scopes.map((s) => ({ ...s }));
  }
  get scopeNames(): string[] {
    return this.state.scopes.map((s) => s.name);
  }
  get accessTokenTtlSeconds(): number | null {
    return this.state.accessTokenTtlSeconds;
  }
  get createdAt(): Date {
    return this.state.createdAt;
  }
  get updatedAt(): Date {
    return this.state.updatedAt;
  }

  /**
   * Changes the name, the scopes (the whole list) or the token lifetime; the identifier never changes.
   * @throws DomainError VALIDATION_FAILED naming the field
   */
  update(change: ResourceChange, now: Date): void {
    this.state = {
      ...this.state,
      ...(change.name !== undefined ? { name: assertName(change.name) } : {}),
      ...(change.scopes !== undefined ? { scopes: checkScopes(change.scopes) } : {}),
      ...(change.accessTokenTtlSeconds !== undefined ? { accessTokenTtlSeconds: assertAccessTokenTtl(change.accessTokenTtlSeconds) } : {}),
      updatedAt: now,
    };
  }

  snapshot(): ResourceState {
    return Resource.restore(this.state).state;
  }
}
