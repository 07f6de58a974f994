import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The parts of panva's `oidc-provider` (ESM only, no bundled types) this service uses. It is
 * loaded with a dynamic `import()` that TypeScript keeps as it is in the CommonJS build, on the
 * first request to a realm's provider endpoints: instances that never serve one do not load it.
 */
export interface OidcContext {
  oidc: {
    route?: string;
    params?: Record<string, unknown>;
    session?: OidcSession;
    client?: OidcClient;
    account?: { accountId: string };
    result?: { login?: { accountId: string; serviceSessionId?: string } } & Record<string, unknown>;
    entities: Record<string, unknown> & { Grant?: OidcGrant; Interaction?: { result?: Record<string, unknown> } };
    provider: OidcProvider;
  };
  req: IncomingMessage;
  set(header: string, value: string): void;
  response: { get(header: string): string };
  type?: string;
  body?: unknown;
  status?: number;
}

export interface OidcSession {
  accountId?: string;
  amr?: string[];
  loginTs?: number;
  serviceSessionId?: string;
  sidFor(clientId: string, value?: string): string | undefined;
  grantIdFor(clientId: string, value?: string): string | undefined;
}

export interface OidcClient {
  clientId: string;
  clientSecret?: string;
  clientAuthMethod: string;
  grantTypeAllowed(type: string): boolean;
  [extra: string]: unknown;
}

export interface OidcGrant {
  jti: string;
  accountId?: string;
  clientId?: string;
  openid?: { scope?: string };
  resources?: Record<string, string>;
  addOIDCScope(scope: string): void;
  addResourceScope(resource: string, scope: string): void;
  getOIDCScope(): string;
  save(ttl?: number): Promise<string>;
  destroy(): Promise<void>;
}

export interface OidcIdToken {
  mask: Record<string, unknown>;
  set(claim: string, value: unknown): void;
  issue(options: { use: 'logout' | 'idtoken' }): Promise<string>;
}

export interface InteractionDetails {
  uid: string;
  prompt: { name: string; reasons: string[]; details: Record<string, unknown> };
  params: Record<string, unknown> & { client_id?: string; scope?: string; redirect_uri?: string };
  session?: { accountId?: string };
  grantId?: string;
  lastSubmission?: Record<string, unknown>;
  result?: Record<string, unknown>;
  returnTo: string;
  exp: number;
  save(ttl: number): Promise<string>;
  [extra: string]: unknown;
}

export interface OidcProvider {
  issuer: string;
  proxy: boolean;
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
  interactionFinished(
    req: IncomingMessage,
    res: ServerResponse,
    result: Record<string, unknown>,
    options?: { mergeWithLastSubmission?: boolean },
  ): Promise<void>;
  interactionResult(
    req: IncomingMessage,
    res: ServerResponse,
    result: Record<string, unknown>,
    options?: { mergeWithLastSubmission?: boolean },
  ): Promise<string>;
  Grant: (new (properties: { accountId: string; clientId: string }) => OidcGrant) & { find(id: string): Promise<OidcGrant | undefined> };
  Client: { prototype: Record<string, unknown>; find(id: string): Promise<OidcClient | undefined> };
  DeviceCode: { findByUserCode(userCode: string, options?: { ignoreExpiration?: boolean }): Promise<{ clientId: string } | undefined> };
  /** The library's ID token model, which also makes logout tokens (`issue({ use: 'logout' })`). */
  IdToken: new (claims: Record<string, unknown>, options: { client: OidcClient; ctx: undefined }) => OidcIdToken;
  Session: { prototype: Record<string, unknown>; IN_PAYLOAD: string[] };
  Interaction: { IN_PAYLOAD: string[] };
  on(event: string, listener: (...args: unknown[]) => void): void;
}

export interface OidcCheck {
  reason: string;
}

export interface OidcPrompt {
  name: string;
  checks: OidcCheck[] & {
    splice(start: number, count: number): OidcCheck[];
    add(check: OidcCheck, index?: number): void;
    get(name: string): OidcCheck | undefined;
  };
}

export interface OidcProviderModule {
  default: (new (issuer: string, configuration: Record<string, unknown>) => OidcProvider) & {
    /** The request's context, from the library's AsyncLocalStorage. */
    readonly ctx: OidcContext | undefined;
  };
  interactionPolicy: {
    base(): OidcPrompt[] & { get(name: string): OidcPrompt | undefined };
    Check: (new (
      reason: string,
      description: string,
      error: string,
      check: (ctx: OidcContext) => Promise<boolean> | boolean,
    ) => OidcCheck) & { REQUEST_PROMPT: boolean; NO_NEED_TO_PROMPT: boolean };
  };
  errors: Record<string, new (description?: string, detail?: string) => Error>;
}

// A string to `import()` stays a dynamic import in the CommonJS output (module: nodenext).
const load = (): Promise<OidcProviderModule> => import('oidc-provider') as Promise<unknown> as Promise<OidcProviderModule>;
let library: Promise<OidcProviderModule> | null = null;

/** The library, loaded once on first use. */
export function oidcProviderLibrary(): Promise<OidcProviderModule> {
  library ??= load();
  library.catch(() => (library = null));
  return library;
}
