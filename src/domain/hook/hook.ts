import { DomainError } from '../errors';

/** The three points where a realm's backend decides: before an account exists, before a session exists, and at every access token. */
export const HOOK_NAMES = ['before-registration', 'before-sign-in', 'token-claims'] as const;
export type HookName = (typeof HOOK_NAMES)[number];

/** What a failed call (no answer in time, a status other than 200, an answer that is not one) means. */
export type HookFailurePolicy = 'deny' | 'allow';
export const HOOK_FAILURE_POLICIES: readonly HookFailurePolicy[] = ['deny', 'allow'];

/** Each hook's failure policy when the administrator names none: decisions fail closed, claims fail open. */
export const DEFAULT_HOOK_FAILURE: Record<HookName, HookFailurePolicy> = {
  'before-registration': 'deny',
  'before-sign-in': 'deny',
  'token-claims': 'allow',
};

export const HOOK_TIMEOUT_MS = { min: 100, max: 5000, default: 2000 } as const;

/** The longest message of a refusal that reaches the client, in characters. */
export const HOOK_MESSAGE_MAX = 200;

/** The largest claims object a `token-claims` answer may add, serialised, in bytes. */
export const HOOK_CLAIMS_MAX_BYTES = 2048;

/** Claim names the access token owns: an answer naming one is a failure, never a forged identity or privilege. */
export const RESERVED_CLAIMS: ReadonlySet<string> = new Set([
  'iss',
  'sub',
  'aud',
  'exp',
  'nbf',
  'iat',
  'jti',
  'realm',
  'sid',
  'roles',
  'amr',
  'app_metadata',
  'cnf',
  'scope',
  'client_id',
  'auth_time',
  'nonce',
  'acr',
  'azp',
  'typ',
  'org',
]);

export function isHookName(name: string): name is HookName {
  return (HOOK_NAMES as readonly string[]).includes(name);
}

export interface HookState {
  realmId: string;
  name: HookName;
  url: string;
  enabled: boolean;
  timeoutMs: number;
  failure: HookFailurePolicy;
  /** `whsec_` + base64 of 32 random bytes; kept encrypted at rest. */
  secret: string;
  createdAt: Date;
  updatedAt: Date;
}

/** What an administrator sets with PUT: the whole configuration but the secret. */
export interface HookSettings {
  url: string;
  enabled?: boolean;
  timeoutMs?: number;
  failure?: HookFailurePolicy;
}

/**
 * @throws DomainError VALIDATION_FAILED for a timeout outside 100–5000 ms or an unknown failure policy
 */
function settled(name: HookName, settings: HookSettings): Pick<HookState, 'url' | 'enabled' | 'timeoutMs' | 'failure'> {
  const timeoutMs = settings.timeoutMs ?? HOOK_TIMEOUT_MS.default;
  if (!Number.isInteger(timeoutMs) || timeoutMs < HOOK_TIMEOUT_MS.min || timeoutMs > HOOK_TIMEOUT_MS.max) {
    throw DomainError.validation('timeoutMs', `must be an integer from ${HOOK_TIMEOUT_MS.min} to ${HOOK_TIMEOUT_MS.max}`);
  }
  const failure = settings.failure ?? DEFAULT_HOOK_FAILURE[name];
  if (!HOOK_FAILURE_POLICIES.includes(failure)) throw DomainError.validation('failure', 'must be "deny" or "allow"');
  return { url: settings.url, enabled: settings.enabled ?? true, timeoutMs, failure };
}

/** A realm's endpoint called, signed, at one of the three points, whose answer the service waits for. */
export class Hook {
  private constructor(private state: HookState) {}

  /** @throws DomainError VALIDATION_FAILED */
  static create(input: { realmId: string; name: HookName; settings: HookSettings; secret: string; now: Date }): Hook {
    return new Hook({
      realmId: input.realmId,
      name: input.name,
      ...settled(input.name, input.settings),
      secret: input.secret,
      createdAt: input.now,
      updatedAt: input.now,
    });
  }

  static restore(state: HookState): Hook {
    return new Hook({ ...state });
  }

  get realmId(): string {
    return this.state.realmId;
  }
  get name(): HookName {
    return this.state.name;
  }
  get url(): string {
    return this.state.url;
  }
  get enabled(): boolean {
    return this.state.enabled;
  }
  get timeoutMs(): number {
    return this.state.timeoutMs;
  }
  get failure(): HookFailurePolicy {
    return this.state.failure;
  }
  get secret(): string {
    return this.state.secret;
  }
  get createdAt(): Date {
    return this.state.createdAt;
  }
  get updatedAt(): Date {
    return this.state.updatedAt;
  }

  /**
   * Replaces the configuration (PUT): what is left out takes its default; the secret stays.
   * @throws DomainError VALIDATION_FAILED
   */
  replace(settings: HookSettings, now: Date): void {
    this.state = { ...this.state, ...settled(this.state.name, settings), updatedAt: now };
  }

  /** A new secret; the old one signs nothing more. */
  rotate(secret: string, now: Date): void {
    this.state = { ...this.state, secret, updatedAt: now };
  }

  snapshot(): HookState {
    return { ...this.state };
  }
}
