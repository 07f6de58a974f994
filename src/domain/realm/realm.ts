import { DomainError } from '../errors';

const REALM_ID = /^[a-z0-9][a-z0-9-]{0,62}$/;

export interface RealmState {
  id: string;
  name: string;
  /** Access-token lifetime for this realm; null uses the configured default. */
  accessTokenTtlSeconds: number | null;
  createdAt: Date;
}

export class Realm {
  private constructor(private readonly state: RealmState) {}

  /**
   * Creates a realm.
   * @throws DomainError VALIDATION_FAILED when the id is not a slug, or the name is empty, too long or holds
   *   control characters (it goes into email subjects and otpauth labels)
   */
  static create(input: { id: string; name: string; now: Date }): Realm {
    if (!Realm.isValidId(input.id)) throw DomainError.validation('id', 'must match ^[a-z0-9][a-z0-9-]{0,62}$');
    const name = input.name.trim();
    if (name.length < 1 || name.length > 100) throw DomainError.validation('name', 'must be 1 to 100 characters');
    if (/\p{Cc}/u.test(name)) throw DomainError.validation('name', 'must not contain control characters');
    return new Realm({ id: input.id, name, accessTokenTtlSeconds: null, createdAt: input.now });
  }

  static restore(state: RealmState): Realm {
    return new Realm({ ...state });
  }

  static isValidId(id: string): boolean {
    return REALM_ID.test(id);
  }

  get id(): string {
    return this.state.id;
  }
  get name(): string {
    return this.state.name;
  }
  get createdAt(): Date {
    return this.state.createdAt;
  }

  accessTokenTtl(defaultSeconds: number): number {
    return this.state.accessTokenTtlSeconds ?? defaultSeconds;
  }

  snapshot(): RealmState {
    return { ...this.state };
  }
}
