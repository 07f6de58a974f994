import { coordinator, type Message } from './coordination.js';
import { dpopKey, dpopProof, type DpopKey } from './dpop.js';
import { errorFrom, FEDERATION_ERROR_CODES, IdentityError, type FederationErrorCode } from './errors.js';
import { collectFingerprint, type FingerprintComponents } from './fingerprint.js';
import { memoryStorage, type TokenStorage } from './storage.js';
import type {
  ActiveOrganization,
  AuthSnapshot,
  AuthUser,
  ClientEvents,
  EmailVerification,
  GrantedApp,
  IdentityProvider,
  LinkedIdentity,
  Membership,
  MfaMethod,
  MfaStatus,
  MfaSummary,
  MfaVerification,
  OrganizationInvitation,
  OrganizationMember,
  RedirectResult,
  Session,
  SignInResult,
  SignOutReason,
  TotpSetup,
  User,
} from './types.js';

/** The functions of `@simplewebauthn/browser` the client uses. */
export interface WebAuthnBrowser {
  startAuthentication(options: { optionsJSON: never; useBrowserAutofill?: boolean }): Promise<unknown>;
  startRegistration(options: { optionsJSON: never }): Promise<unknown>;
  /** For passkey autofill: aborting the pending request. */
  WebAuthnAbortService?: { cancelCeremony(): void };
  browserSupportsWebAuthnAutofill?(): Promise<boolean>;
}

export interface IdentityClientOptions {
  /** The service's base URL, e.g. `https://id.example.com`. */
  baseUrl: string;
  /** The realm every call belongs to. */
  realm: string;
  /**
   * Where the refresh token lives: `'cookie'` (an HttpOnly cookie set by the service; the browser
   * sends it, no script can read it) or a {@link TokenStorage}. Default: {@link memoryStorage}.
   */
  transport?: 'cookie' | TokenStorage;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /**
   * The device fingerprint sent at sign-in, refresh and MFA verification: `true` for the built-in
   * collector (the default in browsers), `false` for none (the default elsewhere), or a function
   * returning components or an opaque string.
   */
  fingerprint?: boolean | (() => FingerprintComponents | string | null | Promise<FingerprintComponents | string | null>);
  /**
   * Restore the session when the client is created (reads the stored refresh token or the cookie).
   * Default: true, except for the cookie transport outside a browser. With the cookie transport a
   * browser restores only when a session may exist: the service's `__Host-session-<realm>` hint
   * cookie is there (a page on the service's host sees it), or, on another host, this client
   * signed in from this browser and did not see the session end — so a signed-out page load
   * sends no request.
   */
  restore?: boolean;
  /** The longest time before expiry at which the access token is renewed, in seconds (default 60). */
  refreshLeadSeconds?: number;
  /**
   * Sender-constrained sessions (DPoP): the session is bound to a key made here with WebCrypto
   * (not extractable; kept in IndexedDB where there is one), and every use of its tokens carries
   * a proof signed with it, so a stolen refresh or access token is useless without the key.
   */
  dpop?: boolean;
  /** Loads the WebAuthn browser functions (default: a dynamic import of `@simplewebauthn/browser`). */
  webauthn?: () => Promise<WebAuthnBrowser>;
}

type Listener<K extends keyof ClientEvents> = (event: ClientEvents[K]) => void;
type TokensBody = { accessToken: string; refreshToken?: string; expiresIn: number };
type Access = { token: string; expiresAt: number };
type Pending = { mfaToken: string; reason: 'sign-in' | 'step-up'; methods: MfaMethod[] | null; sessionId: string | null };
type Claims = {
  sub: string;
  sid: string;
  amr?: string[];
  roles?: string[];
  app_metadata?: Json;
  iat: number;
  exp: number;
  cnf?: { jkt: string };
  org?: ActiveOrganization;
};
type Json = Record<string, unknown>;
type PasskeyFlow = ReturnType<typeof import('./passkeys.js').passkeySignIn<SignInResult>>;

/** After a tab rotates, it keeps the lock this long so that other tabs see its news before they decide. */
const SETTLE_MS = 50;
/** How long a new tab waits for another tab to hand it the current access token. */
const HELLO_MS = 100;
/** A kept access token is reused on a page load only with at least this long left (and 10 % of its life). */
const KEEP_MIN_MS = 5_000;
/** The longest wait between two tries of a restore the service could not answer (no `Retry-After`). */
const RESTORE_BACKOFF_MAX_S = 60;
const AUTH = '/api/v1/auth';
const LOADING: AuthSnapshot = Object.freeze({ status: 'loading' });
/** How long the code verifier of an emailed sign-in link, or of a sign-in at an identity provider, is kept (both live 10 minutes). */
const VERIFIER_MS = 15 * 60_000;

const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');

/** A PKCE pair (RFC 7636 S256): a random verifier to keep, and the challenge to send. */
async function pkce(): Promise<{ codeVerifier: string; codeChallenge: string }> {
  const codeVerifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(codeVerifier)));
  return { codeVerifier, codeChallenge: base64url(digest) };
}

/**
 * The URL's search parameters; when it is the page's own address, the named ones (the service's:
 * a one-time code, a token) are taken out of the address bar and the history entry.
 */
function readAddress(url: string, names: string[]): URLSearchParams {
  const parsed = new URL(url);
  const params = new URLSearchParams(parsed.search);
  if (typeof location !== 'undefined' && url === location.href && names.some((name) => params.has(name))) {
    for (const name of names) parsed.searchParams.delete(name);
    history.replaceState(history.state, '', parsed.pathname + parsed.search + parsed.hash);
  }
  return params;
}

function claimsOf(token: string): Claims {
  const part = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
  return JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(part), (c) => c.charCodeAt(0))));
}

const orgPath = (id: string) => `/organizations/${encodeURIComponent(id)}`;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Whether a cookie session may exist, known without a request. The service sets the readable
 * cookie `__Host-session-<realm>=1` with the refresh cookie and clears it with it; cookies are per
 * host (not port), so a page on the service's host reads it. A page on another host cannot: there
 * a local note, written when this client gets tokens and removed when it sees the session end,
 * stands in for it.
 */
function sessionHint(base: string, realm: string) {
  const note = `identity:${base}:${realm}:session`;
  const sameHost = (() => {
    try {
      return new URL(base, location.href).hostname === location.hostname;
    } catch {
      return false;
    }
  })();
  const storage = (): Storage | null => {
    try {
      return globalThis.localStorage ?? null;
    } catch {
      return null; // storage blocked (sandboxed frame, privacy settings)
    }
  };
  return {
    /** True only when no session can exist; when unsure, false (the client then asks the service). */
    absent(): boolean {
      try {
        if (document.cookie.split(/;\s*/).includes(`__Host-session-${realm}=1`)) return false;
      } catch {
        return false; // cookies unreadable here (sandboxed frame)
      }
      if (sameHost) return true;
      const notes = storage();
      return notes !== null && notes.getItem(note) === null;
    },
    set(present: boolean): void {
      try {
        if (present) storage()?.setItem(note, '1');
        else storage()?.removeItem(note);
      } catch {
        // storage full or blocked: the client will ask the service next time
      }
    },
  };
}

/**
 * The site of a URL as browsers see it for SameSite cookies: the scheme and the registrable
 * domain. Without the public suffix list this takes the last two labels of a name (an IP address
 * or `localhost` is its own site): two hosts under one multi-label suffix (`a.co.uk`, `b.co.uk`)
 * count as one site, so a warning may be missed, never given wrongly for `app.example.com` and
 * `id.example.com`.
 */
function siteOf(url: string): string {
  const { protocol, hostname } = new URL(url, location.href);
  const literal = /^[\d.]+$/.test(hostname) || hostname.includes(':') || hostname.startsWith('[');
  const labels = hostname.split('.');
  return `${protocol}//${literal || labels.length <= 2 ? hostname : labels.slice(-2).join('.')}`;
}

type Kept = { token: string; expiresAt: number; user: AuthUser | null; offset: number };

/**
 * This tab's copy of its current access token, in sessionStorage: a reload of the tab takes it
 * back into use instead of rotating the refresh token (the service allows 10 rotations a minute
 * per user; a page load must not spend them). Only the access token is kept — it lives minutes
 * and, in a DPoP session, is useless without the key — never the refresh token.
 */
function tabKeep(base: string, realm: string) {
  const name = `identity:${base}:${realm}:access`;
  const store = (): Storage | null => {
    try {
      return globalThis.sessionStorage ?? null;
    } catch {
      return null;
    }
  };
  return {
    read(): Kept | null {
      try {
        return JSON.parse(store()?.getItem(name) ?? 'null') as Kept | null;
      } catch {
        return null;
      }
    },
    write(kept: Kept): void {
      try {
        store()?.setItem(name, JSON.stringify(kept));
      } catch {
        // storage full or blocked: the next load rotates instead
      }
    },
    clear(): void {
      try {
        store()?.removeItem(name);
      } catch {
        // blocked: nothing was kept
      }
    },
  };
}

/** Creates the client of one realm. Safe to call during server-side rendering: no network until used. */
export function createIdentityClient(options: IdentityClientOptions) {
  const base = options.baseUrl.replace(/\/+$/, '');
  const { realm } = options;
  const cookie = options.transport === 'cookie';
  const storage: TokenStorage | null = cookie ? null : typeof options.transport === 'object' ? options.transport : memoryStorage();
  const key = `identity:${realm}:refresh`;
  const inBrowser = typeof document !== 'undefined';
  const doFetch = (input: RequestInfo | URL, init?: RequestInit) => (options.fetch ?? globalThis.fetch)(input, init);
  const leadCap = (options.refreshLeadSeconds ?? 60) * 1000;
  const fp = options.fingerprint ?? inBrowser;
  const dpop = options.dpop ?? false;
  let dpopKeyPromise: Promise<DpopKey> | undefined;
  /** Service clock minus local clock, when they disagree by more than a little (for proof `iat`). */
  let clockOffset = 0;
  const loadWebauthn = options.webauthn ?? (() => import('@simplewebauthn/browser') as Promise<WebAuthnBrowser>);

  let access: Access | null = null;
  let pending: Pending | null = null;
  let user: AuthUser | null = null;
  let knownMethods: MfaMethod[] | null = null;
  let snapshot: AuthSnapshot = LOADING;
  let refreshing: Promise<string | null> | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let helloReply: (() => void) | null = null;
  const subscribers = new Set<() => void>();
  const listeners: Record<string, Set<(event: never) => void>> = {};

  const tabs = coordinator(`identity:${base}:${realm}`, cookie || !!storage?.shared, receive);
  const hint = cookie && inBrowser ? sessionHint(base, realm) : null;
  const keep = inBrowser ? tabKeep(base, realm) : null;
  /** True while the access token in use is one a reload took back from {@link keep}, not yet confirmed by the service. */
  let fromKeep = false;
  let restoreTimer: ReturnType<typeof setTimeout> | undefined;
  let restoreTries = 0;
  /** Pending passkey autofill requests: a sign-in of another kind, or another ceremony, stops them first. */
  const autofills = new Set<{ stop(): Promise<void> }>();
  const quietAutofill = () => Promise.all([...autofills].map((request) => request.stop())).then(() => undefined);

  if (cookie && inBrowser) {
    try {
      if (siteOf(base) !== siteOf(location.href)) {
        console.warn(
          `identity client: this page (${location.origin}) and the service (${new URL(base, location.href).origin}) are different sites. ` +
            'The browser drops the SameSite=Strict refresh cookie the service sets for a cross-site request, so the session would not ' +
            "survive a reload. Serve the page and the service from one site (e.g. both on localhost, or app.example.com and id.example.com), or use a TokenStorage transport instead of 'cookie'.",
        );
      }
    } catch {
      // an unparseable baseUrl fails at the first request
    }
  }

  // ---- state ----

  function setSnapshot(next: AuthSnapshot): void {
    snapshot = next;
    if (next.status !== 'loading') {
      clearTimeout(restoreTimer);
      decided();
    }
    subscribers.forEach((notify) => notify());
  }

  function emit<K extends keyof ClientEvents>(type: K, event: ClientEvents[K]): void {
    listeners[type]?.forEach((listener) => (listener as Listener<K>)(event));
  }

  /** Takes an access token (from an answer here or from another tab) into use. */
  function adopt(token: string, expiresAt: number, from: AuthUser | null): void {
    const claims = claimsOf(token);
    const previous = snapshot.status === 'signed-in' ? snapshot.sessionId : null;
    if (from) user = from;
    else if (previous !== claims.sid) user = null;
    access = { token, expiresAt };
    fromKeep = false;
    pending = null;
    keep?.write({ token, expiresAt, user, offset: clockOffset });
    // Signed in (here or in another tab): a passkey offered in autofill would sign in again.
    void quietAutofill();
    setSnapshot({
      status: 'signed-in',
      user,
      userId: claims.sub,
      sessionId: claims.sid,
      amr: claims.amr ?? [],
      roles: claims.roles ?? [],
      appMetadata: claims.app_metadata ?? {},
      organization: claims.org ?? null,
      expiresAt,
    });
    schedule();
    if (previous === claims.sid) emit('token-refreshed', { sessionId: claims.sid, expiresAt });
    else emit('signed-in', { user, sessionId: claims.sid });
  }

  /** Stores the answer's tokens, takes them into use and tells the other tabs. */
  async function establish(tokens: TokensBody, sentAt: number, from: AuthUser | null): Promise<void> {
    if (storage && tokens.refreshToken) await storage.set(key, tokens.refreshToken);
    hint?.set(true);
    const claims = claimsOf(tokens.accessToken);
    // When the clocks agree, the token's own expiry is exact; otherwise count from the request.
    const synced = Math.abs(Date.now() - claims.iat * 1000) < 2000;
    clockOffset = synced ? 0 : claims.iat * 1000 - sentAt;
    const expiresAt = synced ? claims.exp * 1000 : sentAt + (claims.exp - claims.iat - 1) * 1000;
    adopt(tokens.accessToken, expiresAt, from);
    tabs.post({ t: 'tokens', token: tokens.accessToken, expiresAt, user: from, offset: clockOffset });
  }

  function signedOut(reason: SignOutReason | null, announce: boolean): void {
    clearTimeout(timer);
    const was = snapshot.status;
    hint?.set(false);
    keep?.clear();
    access = null;
    pending = null;
    user = null;
    setSnapshot({ status: 'signed-out', reason });
    if (announce) tabs.post({ t: 'out', reason });
    if (reason && was !== 'signed-out') emit('signed-out', { reason });
  }

  function stepUp(next: Pending, announce: boolean): void {
    clearTimeout(timer);
    keep?.clear();
    access = null;
    pending = next;
    setSnapshot({ status: 'mfa-required', reason: next.reason, methods: next.methods, sessionId: next.sessionId });
    if (announce) tabs.post({ t: 'mfa', pending: next });
    emit('mfa-required', { reason: next.reason, methods: next.methods, sessionId: next.sessionId });
  }

  function receive(message: Message): void {
    if (message.t === 'tokens') {
      const expiresAt = message.expiresAt as number;
      if (!access || expiresAt > access.expiresAt) {
        clockOffset = (message.offset as number) ?? clockOffset;
        adopt(message.token as string, expiresAt, message.user as AuthUser | null);
      }
      helloReply?.();
    } else if (message.t === 'hello') {
      if (access && access.expiresAt > Date.now() + 1000)
        tabs.post({ t: 'tokens', token: access.token, expiresAt: access.expiresAt, user, offset: clockOffset });
    } else if (message.t === 'out') {
      if (snapshot.status !== 'signed-out')
        signedOut(message.reason === 'signed-out' ? 'other-tab' : (message.reason as SignOutReason), false);
    } else if (message.t === 'mfa') {
      stepUp(message.pending as Pending, false);
    }
  }

  // ---- refresh ----

  function schedule(): void {
    clearTimeout(timer);
    if (!access) return;
    const life = Math.max(0, access.expiresAt - Date.now());
    const lead = Math.min(leadCap, life * 0.1) + Math.random() * Math.min(15_000, life * 0.05);
    const stale = access.token;
    timer = setTimeout(
      () =>
        refresh(stale).catch((error: IdentityError) => {
          // Not reachable now (network, rate limit): try again later while the session lasts.
          if (access?.token === stale) {
            timer = setTimeout(() => refresh(stale).catch(() => undefined), (error.retryAfter ?? 5) * 1000);
            (timer as { unref?: () => void }).unref?.();
          }
        }),
      Math.max(0, life - lead),
    );
    (timer as { unref?: () => void }).unref?.();
  }

  /**
   * A fresh access token, rotating the refresh token at most once per cycle across the tabs.
   * `stale` is the token the caller found too old (null: none).
   */
  function refresh(stale: string | null): Promise<string | null> {
    if (!refreshing) {
      let settle!: (value: string | null) => void;
      let fail!: (error: unknown) => void;
      const done = new Promise<string | null>((resolve, reject) => {
        settle = resolve;
        fail = reject;
      });
      refreshing = done;
      tabs
        .lock(async () => {
          try {
            settle(await rotate(stale));
          } catch (error) {
            fail(error);
          }
          if (cookie || storage?.shared) await sleep(SETTLE_MS);
        })
        .catch(fail);
      // Callers after this rotation start a new one (which waits for the lock, then looks again).
      done.then(
        () => {
          if (refreshing === done) refreshing = null;
        },
        () => {
          if (refreshing === done) refreshing = null;
        },
      );
    }
    return refreshing;
  }

  async function rotate(stale: string | null): Promise<string | null> {
    // Another tab rotated while this one waited for the lock, and shared the result.
    if (access && access.token !== stale && access.expiresAt > Date.now()) return access.token;
    if (pending) return null;
    const refreshToken = storage ? await storage.get(key) : undefined;
    if (storage && !refreshToken) {
      signedOut(snapshot.status === 'signed-in' ? 'session-ended' : null, false);
      return null;
    }
    const sentAt = Date.now();
    try {
      const body = await call('POST', '/refresh', { refreshToken, deviceFingerprint: await fingerprint() }, true);
      await establish(body.tokens as TokensBody, sentAt, null);
      return access!.token;
    } catch (error) {
      const code = (error as IdentityError).code;
      if (code === 'MFA_REQUIRED') {
        const sessionId = snapshot.status === 'signed-in' ? snapshot.sessionId : null;
        stepUp({ mfaToken: (error as { mfaToken: string }).mfaToken, reason: 'step-up', methods: knownMethods, sessionId }, true);
        return null;
      }
      if (code === 'INVALID_TOKEN' || code === 'REAUTHENTICATION_REQUIRED') {
        await storage?.remove(key);
        const reason = code === 'INVALID_TOKEN' ? (snapshot.status === 'loading' ? null : 'session-ended') : 'reauthentication-required';
        signedOut(reason, true);
        return null;
      }
      throw error;
    }
  }

  async function fingerprint(): Promise<string | undefined> {
    if (!fp) return undefined;
    try {
      const value = fp === true ? await collectFingerprint() : await fp();
      return value === null ? undefined : typeof value === 'string' ? value : JSON.stringify(value);
    } catch {
      return undefined;
    }
  }

  // ---- HTTP ----

  /**
   * The credentials of one request: `Authorization` with the access token (scheme `DPoP` for a
   * token bound to this client's key, with a proof covering it) and, with DPoP on, a proof on the
   * requests that create, rotate or end a session (`proof`).
   */
  async function authorize(headers: Headers, method: string, url: string, token: string | null, proof: boolean): Promise<void> {
    const bound = token !== null && claimsOf(token).cnf !== undefined;
    if (token) headers.set('Authorization', `${bound ? 'DPoP' : 'Bearer'} ${token}`);
    if (dpop && (proof || bound)) {
      const key = await (dpopKeyPromise ??= dpopKey(`${base} ${realm}`));
      headers.set('DPoP', await dpopProof(key, method, url, bound ? token : null, clockOffset));
    }
  }

  /** One request to the service; answers other than 2xx throw an {@link IdentityError}. */
  async function call(method: string, path: string, body?: Json, tokenTransport = false, token: string | null = null): Promise<Json> {
    const withCookie = tokenTransport && cookie;
    const url = base + AUTH + path;
    const headers = new Headers({ 'X-Realm-Id': realm });
    if (body !== undefined) headers.set('Content-Type', 'application/json');
    if (withCookie) headers.set('X-Refresh-Token-Transport', 'cookie');
    let response: Response;
    try {
      await authorize(headers, method, url, token, tokenTransport);
      response = await doFetch(url, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        credentials: withCookie ? 'include' : undefined,
      });
    } catch (cause) {
      throw new IdentityError('NETWORK_ERROR', 'The service could not be reached', { cause });
    }
    if (!response.ok) throw await errorFrom(response);
    return response.status === 204 ? {} : response.json();
  }

  /** An authenticated call: refreshes once and retries once when the access token has expired. */
  async function authed(method: string, path: string, body?: Json): Promise<Json> {
    const token = await currentToken();
    try {
      return await call(method, path, body, false, token);
    } catch (error) {
      const code = (error as IdentityError).code;
      // A token taken back after a reload may belong to a session that ended meanwhile: the refresh tells.
      if (code !== 'TOKEN_EXPIRED' && !(code === 'INVALID_TOKEN' && fromKeep && access?.token === token)) throw error;
      return call(method, path, body, false, await renewed(token));
    }
  }

  async function currentToken(): Promise<string> {
    await ready;
    let token = access && access.expiresAt - Date.now() > 500 ? access.token : null;
    if (!token && snapshot.status === 'signed-in') token = await refresh(access?.token ?? null);
    if (!token)
      throw new IdentityError('NOT_SIGNED_IN', snapshot.status === 'mfa-required' ? 'A second factor is required' : 'Not signed in');
    return token;
  }

  async function renewed(stale: string): Promise<string> {
    const token = await refresh(stale);
    if (!token) throw new IdentityError('NOT_SIGNED_IN', 'Not signed in');
    return token;
  }

  /**
   * `fetch` with the access token: adds `Authorization`, and when the answer is 401
   * `TOKEN_EXPIRED`, refreshes once and sends the request once more.
   */
  async function authFetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
    const request = new Request(input, init);
    const retry = request.clone();
    const send = async (req: Request, token: string) => {
      await authorize(req.headers, req.method, req.url, token, false);
      return doFetch(req);
    };
    const token = await currentToken();
    const response = await send(request, token);
    if (response.status !== 401) return response;
    const answer = await response
      .clone()
      .json()
      .catch(() => null);
    if (answer?.error?.code !== 'TOKEN_EXPIRED') return response;
    return send(retry, await renewed(token));
  }

  // ---- restore ----

  async function restore(): Promise<void> {
    const wanted = options.restore ?? (!cookie || inBrowser);
    if (!wanted || (storage && !(await storage.get(key))) || hint?.absent()) return signedOut(null, false);
    // A reload of this tab: its access token, while it has a while to live, is taken back without
    // spending a refresh — after one read of the account with it, which also tells whether the
    // session still lives (a session ended elsewhere is refused there, and the refresh below says so).
    const kept = keep?.read();
    if (kept && typeof kept.token === 'string') {
      try {
        const { iat, exp } = claimsOf(kept.token);
        const left = kept.expiresAt - Date.now();
        if (left > Math.max(KEEP_MIN_MS, (exp - iat) * 100)) {
          clockOffset = kept.offset ?? 0;
          const alive = await call('GET', '/me', undefined, false, kept.token).then(
            (answer) => answer.user as User,
            (error: IdentityError) => (error.code === 'INVALID_TOKEN' || error.code === 'TOKEN_EXPIRED' ? null : undefined),
          );
          if (alive !== null) {
            const known = alive
              ? { id: alive.id, email: alive.email, emailVerified: alive.emailVerified, mfaEnabled: alive.mfa.enabled }
              : (kept.user ?? null);
            if (alive) knownMethods = alive.mfa.methods;
            adopt(kept.token, kept.expiresAt, known);
            fromKeep = true;
            return;
          }
          keep?.clear();
        }
      } catch {
        // not a token: rotate
      }
    }
    if (cookie || storage?.shared) {
      // Another tab may hold a current access token: ask before rotating.
      await new Promise<void>((resolve) => {
        helloReply = resolve;
        tabs.post({ t: 'hello' });
        setTimeout(resolve, HELLO_MS);
      });
      helloReply = null;
      if (snapshot.status !== 'loading') return;
    }
    await tryRestore();
  }

  /**
   * One try at rotating the previous session's refresh token. When the service cannot answer now
   * (rate limited, unreachable, failing) nothing is known about the session: the state stays
   * `loading` (with `retryAt`) and the client tries again after `Retry-After` (without one, after
   * 2, 4, 8 … up to 60 s). Only a refusal of the token signs out.
   */
  async function tryRestore(): Promise<void> {
    try {
      await refresh(null);
    } catch (error) {
      const { code, status, retryAfter } = error as IdentityError;
      if (snapshot.status === 'loading' && (code === 'RATE_LIMITED' || code === 'NETWORK_ERROR' || status >= 500)) {
        restoreTries += 1;
        const seconds = retryAfter ?? Math.min(RESTORE_BACKOFF_MAX_S, 2 ** restoreTries);
        setSnapshot({ status: 'loading', retryAt: Date.now() + seconds * 1000 });
        restoreTimer = setTimeout(() => {
          if (snapshot.status === 'loading') void tryRestore();
        }, seconds * 1000);
        return;
      }
    }
    if (snapshot.status === 'loading') signedOut(null, false);
  }

  let decided!: () => void;
  /** Resolves once the previous session's state is known (restored, or none): never while the service cannot be asked. */
  const ready = new Promise<void>((resolve) => (decided = resolve));
  /** Resolves after the first try at restoring: a sign-in may start then, even while a restore waits to try again. */
  const started: Promise<void> = Promise.resolve().then(restore);

  // ---- API ----

  async function loginStep(path: string, body: Json): Promise<SignInResult> {
    // Another way of signing in than the autofill's own: the autofill request stops first.
    if (path !== '/passkeys/verify') await quietAutofill();
    const sentAt = Date.now();
    const answer = await call('POST', path, { ...body, deviceFingerprint: await fingerprint() }, true);
    const from = answer.user as AuthUser;
    if (answer.requiresMfa) {
      knownMethods = answer.mfaMethods as MfaMethod[];
      stepUp({ mfaToken: answer.mfaToken as string, reason: 'sign-in', methods: knownMethods, sessionId: null }, false);
      return { kind: 'mfa-required', user: from, methods: knownMethods };
    }
    await establish(answer.tokens as TokensBody, sentAt, from);
    return { kind: 'signed-in', user: from };
  }

  async function webauthnResponse(run: (browser: WebAuthnBrowser, optionsJSON: never) => Promise<unknown>, optionsJSON: Json) {
    // A browser runs one WebAuthn request at a time: a pending autofill request ends before this one starts.
    await quietAutofill();
    try {
      return await run(await loadWebauthn(), optionsJSON as never);
    } catch (cause) {
      throw new IdentityError('WEBAUTHN_FAILED', (cause as Error)?.message || 'The WebAuthn ceremony failed', { cause });
    }
  }

  /** The passkey flows, loaded with the WebAuthn library on first use. */
  let passkeyFlow: Promise<PasskeyFlow> | null = null;
  const passkeys = () =>
    (passkeyFlow ??= import('./passkeys.js').then(({ passkeySignIn }) =>
      passkeySignIn<SignInResult>({
        browser: async () => {
          const lib = await loadWebauthn();
          return {
            startAuthentication: lib.startAuthentication,
            cancelCeremony: () => lib.WebAuthnAbortService?.cancelCeremony(),
            browserSupportsWebAuthnAutofill: lib.browserSupportsWebAuthnAutofill,
          };
        },
        challenge: () => call('POST', '/passkeys/options', {}) as Promise<never>,
        verify: (challengeId, response) => loginStep('/passkeys/verify', { challengeId, response }),
      }),
    ));
  const ceremony = <T>(work: Promise<T>) =>
    work.catch((cause: unknown) => {
      if (cause instanceof IdentityError) throw cause;
      throw new IdentityError('WEBAUTHN_FAILED', (cause as Error)?.message || 'The WebAuthn ceremony failed', { cause });
    });
  const linkKey = `identity:${realm}:email-link`;
  const federationKey = `identity:${realm}:federation`;

  /**
   * Starts a sign-in at an identity provider (a link to the signed-in user with `link`), keeps the
   * code verifier in this tab's sessionStorage, and sends the browser to the provider.
   */
  async function toProvider(alias: string, returnTo: string, link: boolean): Promise<void> {
    const { codeVerifier, codeChallenge } = await pkce();
    const path = `/federation/${encodeURIComponent(alias)}/start`;
    const answer = link
      ? await authed('POST', path, { returnTo, codeChallenge, link })
      : await call('POST', path, { returnTo, codeChallenge, deviceFingerprint: await fingerprint() });
    sessionStorage.setItem(federationKey, JSON.stringify({ codeVerifier, until: Date.now() + VERIFIER_MS }));
    location.assign(answer.authorizationUrl as string);
  }

  const mfaResult = (answer: Json) => {
    const mfa = answer.mfa as MfaSummary;
    knownMethods = mfa.methods;
    return answer;
  };

  const client = {
    /** Resolves once the session of a previous page load (if any) is restored. */
    ready,

    /** The current state, the same object until it changes (`useSyncExternalStore`). */
    getSnapshot: (): AuthSnapshot => snapshot,
    /** The snapshot during server-side rendering: always `loading`. */
    getServerSnapshot: (): AuthSnapshot => LOADING,
    /** Calls `onChange` after every state change; returns the unsubscribe function. */
    subscribe(onChange: () => void): () => void {
      subscribers.add(onChange);
      return () => void subscribers.delete(onChange);
    },
    /** Listens to one kind of event; returns the unsubscribe function. */
    on<K extends keyof ClientEvents>(type: K, listener: Listener<K>): () => void {
      const set = (listeners[type] ??= new Set());
      set.add(listener);
      return () => void set.delete(listener);
    },

    /** Creates an account; a verification email is sent. */
    register: (input: { email: string; password: string; name: string }) =>
      call('POST', '/register', input) as Promise<{ user: AuthUser; message: string }>,
    /**
     * Answers the emailed verification link: confirms the address, or with `{ notMe: true }` tells
     * that whoever owns the mailbox did not create the account (it is then taken over: its password,
     * second factors, linked accounts and sessions removed; the owner signs in with an email code or
     * a password reset). Ask the user before calling it: a page that calls it as it loads lets a mail
     * scanner answer for them. Resolves to `{ kind: 'verified' }` (the address is confirmed) or
     * `{ kind: 'disowned' }` (with `notMe`: the account was taken over for the mailbox's owner);
     * a used or unknown token throws `INVALID_VERIFICATION_TOKEN`.
     */
    verifyEmail: (token: string, options: { notMe?: boolean } = {}): Promise<EmailVerification> =>
      call('POST', '/verify-email', options.notMe ? { token, notMe: true } : { token }).then((): EmailVerification => ({
        kind: options.notMe ? 'disowned' : 'verified',
      })),
    /** Sends the verification email again (answers the same whether or not the address is known). */
    resendVerification: (email: string) => call('POST', '/verify-email/resend', { email }).then(() => undefined),
    /** Emails a password reset link (answers the same whether or not the address is known). */
    forgotPassword: (email: string) => call('POST', '/password/forgot', { email }).then(() => undefined),
    /** Sets a new password with the token of the emailed link; every session of the user ends. */
    resetPassword: (input: { token: string; password: string }) => call('POST', '/password/reset', input).then(() => undefined),

    /** Signs in; when the user has a second factor, the result asks for {@link verifyMfa}. */
    async signIn(input: { email: string; password: string }): Promise<SignInResult> {
      await started;
      return loginStep('/login', input);
    },

    /**
     * Completes a sign-in, or re-verifies a flagged session (step-up: the same session goes on),
     * with a TOTP code, a recovery code, or a security key or passkey (the browser ceremony is run here).
     */
    async verifyMfa(verification: MfaVerification): Promise<{ kind: 'signed-in'; user: AuthUser }> {
      if (!pending) throw new IdentityError('NOT_SIGNED_IN', 'No second factor is awaited');
      const { mfaToken } = pending;
      try {
        let code = 'code' in verification ? verification.code : '';
        if (verification.type === 'webauthn') {
          const optionsJSON = await call('POST', '/mfa/webauthn/options', { mfaToken });
          code = JSON.stringify(await webauthnResponse((browser, o) => browser.startAuthentication({ optionsJSON: o }), optionsJSON));
        }
        return (await loginStep('/mfa/verify', { mfaToken, code, type: verification.type })) as { kind: 'signed-in'; user: AuthUser };
      } catch (error) {
        const code = (error as IdentityError).code;
        if ((code === 'INVALID_TOKEN' || code === 'TOKEN_EXPIRED') && pending?.mfaToken === mfaToken) {
          // The verification can no longer succeed: sign in again.
          if (pending.reason === 'step-up') {
            await storage?.remove(key);
            signedOut('session-ended', true);
          } else signedOut(null, false);
        }
        throw error;
      }
    },

    passkeys: {
      /**
       * Offers the user's passkeys in the browser's autofill of an `<input autocomplete="username webauthn">`
       * (`mediation: "conditional"`); `result` settles with the sign-in when one is picked, or null
       * once stopped or where the browser has no passkey autofill. The request renews its challenge
       * before it expires, so a page may stay open; call `stop()` when leaving the page (it resolves
       * once the browser's request has ended).
       *
       * It starts only once the previous session's state is known and nobody is signed in: not while
       * a restore waits to try again, never over a session. A sign-in of any other kind (password,
       * emailed code, identity provider), a passkey or security key registration, a second-factor
       * ceremony, and a sign-in in another tab stop it first — the result is then null.
       */
      autofill(): { result: Promise<SignInResult | null>; stop(): Promise<void> } {
        let request: { stop(): Promise<void> } | null = null;
        let stopped = false;
        const entry = {
          stop: async () => {
            stopped = true;
            await request?.stop();
          },
        };
        autofills.add(entry);
        const result = ceremony(
          ready
            .then(() => (stopped || snapshot.status !== 'signed-out' ? null : passkeys()))
            .then((flow) => {
              if (!flow || stopped) return null;
              const started = flow.autofill();
              request = started;
              return started.result;
            }),
        ).finally(() => autofills.delete(entry));
        return { result, stop: entry.stop };
      },
      /** Signs in with a passkey from a button: the autofill request, if any, is aborted first (one request at a time). */
      signIn: (): Promise<SignInResult> => ceremony(started.then(passkeys).then((flow) => flow.modal())),
      /** Registers a passkey (discoverable, user-verified) for the signed-in user: it signs in without a password. */
      register: (input: { name?: string } = {}) => client.mfa.addSecurityKey({ ...input, passkey: true }),
    },

    emailCode: {
      /**
       * Emails a sign-in code (always answers alike, known address or not). With `returnTo`, the
       * email also holds a link to that page, which works only in this browser: it keeps the
       * link's code verifier.
       */
      async send(email: string, options: { returnTo?: string } = {}): Promise<void> {
        let link = {};
        if (options.returnTo) {
          const { codeVerifier, codeChallenge } = await pkce();
          localStorage.setItem(linkKey, JSON.stringify({ codeVerifier, until: Date.now() + VERIFIER_MS }));
          link = { returnTo: options.returnTo, codeChallenge };
        }
        await call('POST', '/email-code', { email, ...link });
      },
      /** Signs in with the emailed code. */
      async verify(email: string, code: string): Promise<SignInResult> {
        await started;
        return loginStep('/email-code/verify', { email, code });
      },
      /**
       * On the page the link opens: signs in with its `email_token` and this browser's verifier, and
       * takes the token out of the address bar. Null when the URL has no token. In another browser
       * nothing is sent (`EMAIL_LINK_OTHER_BROWSER`): ask for the code instead.
       */
      async completeLink(url: string = location.href): Promise<SignInResult | null> {
        const token = readAddress(url, ['email_token']).get('email_token');
        if (!token) return null;
        const kept = JSON.parse(localStorage.getItem(linkKey) ?? 'null') as { codeVerifier: string; until: number } | null;
        if (!kept || kept.until < Date.now()) {
          throw new IdentityError(
            'EMAIL_LINK_OTHER_BROWSER',
            'This link works only in the browser where it was asked for: enter the code instead',
          );
        }
        localStorage.removeItem(linkKey);
        await started;
        return loginStep('/email-code/verify', { token, codeVerifier: kept.codeVerifier });
      },
    },

    federation: {
      /** The realm's enabled identity providers, for sign-in buttons (an empty list when there are none). */
      providers: () => call('GET', '/providers').then((answer) => answer.providers as IdentityProvider[]),
      /**
       * Signs in with an identity provider: starts the flow, keeps its code verifier in this tab, and
       * sends the browser to the provider. `returnTo` (one of the realm's `allowedReturnUrls`) is
       * the page that calls {@link complete} when the browser comes back.
       */
      signInWith: (alias: string, options: { returnTo: string }) => toProvider(alias, options.returnTo, false),
      /**
       * Links an account at the provider to the signed-in user: as {@link signInWith}; on return,
       * {@link complete} finishes the link with the verifier this tab kept (a link started in
       * another browser cannot be finished in this one) and answers `{ kind: 'linked' }`.
       */
      link: (alias: string, options: { returnTo: string }) => toProvider(alias, options.returnTo, true),
      /**
       * On the `returnTo` page: reads `code`, `link_code` or `error` from the URL (default: the
       * page's own, then cleaned of them). A login code signs in with this tab's verifier — the
       * same result as {@link signIn}, `mfa-required` included; a link code finishes a link of the
       * signed-in user. Null when the URL has none of them. A refusal throws its
       * {@link FederationErrorCode}; a return to a tab that did not start the flow throws
       * `FEDERATION_NOT_STARTED_HERE`, sending nothing.
       */
      async complete(url: string = location.href): Promise<RedirectResult | null> {
        const params = readAddress(url, ['code', 'link_code', 'error', 'error_description']);
        const [code, linkCode, error] = [params.get('code'), params.get('link_code'), params.get('error')];
        if (!code && !linkCode && !error) return null;
        const kept = JSON.parse(sessionStorage.getItem(federationKey) ?? 'null') as { codeVerifier: string; until: number } | null;
        sessionStorage.removeItem(federationKey);
        if (error) {
          const known = error.toUpperCase() as FederationErrorCode;
          throw new IdentityError(
            FEDERATION_ERROR_CODES.includes(known) ? known : 'PROVIDER_ERROR',
            params.get('error_description') || error,
          );
        }
        if (!kept || kept.until < Date.now()) {
          throw new IdentityError(
            'FEDERATION_NOT_STARTED_HERE',
            linkCode
              ? 'This link was not started in this browser tab, or too long ago: start it again'
              : 'This sign-in was not started in this browser tab, or too long ago: start it again',
          );
        }
        await started;
        if (linkCode) {
          const answer = await authed('POST', '/federation/link', { code: linkCode, codeVerifier: kept.codeVerifier });
          const identity = answer.identity as LinkedIdentity;
          return { kind: 'linked', provider: identity.provider, identity };
        }
        return loginStep('/federation/exchange', { code, codeVerifier: kept.codeVerifier });
      },
      /** The signed-in user's linked accounts. */
      identities: () => authed('GET', '/identities').then((answer) => answer.identities as LinkedIdentity[]),
      /** Unlinks one; refused (`INVALID_USER_STATE`) when it is the account's last way to sign in. */
      unlink: (id: string) => authed('DELETE', `/identities/${encodeURIComponent(id)}`).then(() => undefined),
    },

    /**
     * Ends the session on the service and in every tab. Never throws: the local session ends
     * regardless. Signed out already (or halfway through a sign-in's second step, before any
     * session exists), nothing is sent.
     */
    async signOut(): Promise<void> {
      await started;
      const refreshToken = storage ? await storage.get(key) : undefined;
      const session =
        snapshot.status === 'signed-in' ||
        snapshot.status === 'loading' ||
        (snapshot.status === 'mfa-required' && snapshot.reason === 'step-up');
      if (session && (cookie || refreshToken)) {
        await call('POST', '/logout', cookie ? {} : { refreshToken }, true).catch(() => undefined);
      }
      await storage?.remove(key);
      signedOut('signed-out', true);
    },

    /**
     * Renews the access token now (one rotation of the refresh token, shared with the other tabs),
     * so that roles and app metadata an administrator changed show in the snapshot at once.
     * Resolves to the new signed-in snapshot; throws `NOT_SIGNED_IN` when there is no session (or it
     * ended, or a second factor is now asked for), or the service's error (`RATE_LIMITED` …).
     */
    async refresh(): Promise<Extract<AuthSnapshot, { status: 'signed-in' }>> {
      await ready;
      if (snapshot.status !== 'signed-in') throw new IdentityError('NOT_SIGNED_IN', 'Not signed in');
      const token = await refresh(access?.token ?? null);
      const now = snapshot as AuthSnapshot;
      if (!token || now.status !== 'signed-in')
        throw new IdentityError('NOT_SIGNED_IN', now.status === 'mfa-required' ? 'A second factor is required' : 'Not signed in');
      return now;
    },

    /** A current access token (renewed first when it is about to expire), or null when signed out. */
    getAccessToken: () => currentToken().catch(() => null),
    /** `fetch` with the access token; on `TOKEN_EXPIRED` it refreshes once and retries once. */
    fetch: authFetch,

    /** The signed-in user's account. */
    async me(): Promise<User> {
      const found = (await authed('GET', '/me')).user as User;
      knownMethods = found.mfa.methods;
      if (snapshot.status === 'signed-in' && snapshot.userId === found.id) {
        user = { id: found.id, email: found.email, emailVerified: found.emailVerified, mfaEnabled: found.mfa.enabled };
        setSnapshot({ ...snapshot, user });
      }
      return found;
    },
    /** Changes the user's own name or avatar (an https URL; `null` removes it); omitted fields stay. */
    updateProfile: (changes: { firstName?: string; lastName?: string; avatar?: string | null }) =>
      authed('PATCH', '/me', changes).then((answer) => answer.user as User),
    /** Changes the password (an account without one sets its first without `currentPassword`); the user's other sessions end. */
    changePassword: (input: { currentPassword?: string; newPassword: string }) =>
      authed('POST', '/password/change', input).then(() => undefined),

    organizations: {
      /** The user's organizations, with their roles in each. */
      list: () => authed('GET', '/organizations').then((answer) => answer.organizations as Membership[]),
      /** Accepts an invitation (the token of its link) for the signed-in user, whose verified address must be the invited one. */
      accept: (token: string) =>
        authed('POST', '/organizations/invitations/accept', { token }).then((answer) => answer.organization as Membership),
      /**
       * Makes one of the user's organizations the session's active one (null: none): the new access
       * token carries it, and so do the session's refreshes. Resolves to the snapshot's `organization`.
       */
      async setActive(organizationId: string | null): Promise<ActiveOrganization | null> {
        const sentAt = Date.now();
        const answer = await authed('POST', '/organizations/active', { organizationId });
        await establish(answer.tokens as TokensBody, sentAt, user);
        return snapshot.status === 'signed-in' ? snapshot.organization : null;
      },
      /** An organization's members (its `org-admin`s only). */
      members: (organizationId: string, page = { page: 1, limit: 20 }) =>
        authed('GET', `${orgPath(organizationId)}/members?page=${page.page}&limit=${page.limit}`) as Promise<unknown> as Promise<{
          members: OrganizationMember[];
          pagination: { total: number; page: number; limit: number };
        }>,
      /** Sets a member's organization roles (`org-admin`s only). */
      setMemberRoles: (organizationId: string, userId: string, roles: string[]) =>
        authed('PUT', `${orgPath(organizationId)}/members/${encodeURIComponent(userId)}`, { roles }).then(
          (answer) => answer.member as OrganizationMember,
        ),
      /** Removes a member (`org-admin`s only). */
      removeMember: (organizationId: string, userId: string) =>
        authed('DELETE', `${orgPath(organizationId)}/members/${encodeURIComponent(userId)}`).then(() => undefined),
      /** The pending invitations (`org-admin`s only). */
      invitations: (organizationId: string) =>
        authed('GET', `${orgPath(organizationId)}/invitations`).then((answer) => answer.invitations as OrganizationInvitation[]),
      /** Invites an address with organization roles (`org-admin`s only): an email with a link valid 7 days. */
      invite: (organizationId: string, input: { email: string; roles: string[] }) =>
        authed('POST', `${orgPath(organizationId)}/invitations`, input).then((answer) => answer.invitation as OrganizationInvitation),
      /** Revokes a pending invitation (`org-admin`s only). */
      revokeInvitation: (organizationId: string, invitationId: string) =>
        authed('DELETE', `${orgPath(organizationId)}/invitations/${encodeURIComponent(invitationId)}`).then(() => undefined),
    },

    apps: {
      /** The apps the user let sign them in through the realm's OpenID provider, with what each may access. */
      list: () => authed('GET', '/apps').then((answer) => answer.apps as GrantedApp[]),
      /** Revokes an app's access: its grant ends, and every token it holds for the user. */
      revoke: (clientId: string) => authed('DELETE', `/apps/${encodeURIComponent(clientId)}`).then(() => undefined),
    },

    sessions: {
      /** The user's sessions; `current` marks this client's. */
      list: () => authed('GET', '/sessions').then((answer) => answer.sessions as Session[]),
      /** Ends one of the user's sessions. */
      revoke: (id: string) => authed('DELETE', `/sessions/${encodeURIComponent(id)}`).then(() => undefined),
      /** Ends every session of the user but this one; resolves to how many ended. */
      revokeOthers: () => authed('DELETE', '/sessions').then((answer) => answer.revoked as number),
    },

    mfa: {
      status: () =>
        authed('GET', '/mfa').then((answer) => {
          knownMethods = (answer as unknown as MfaStatus).methods;
          return answer as unknown as MfaStatus;
        }),
      /** Starts TOTP enrolment: the secret and a QR code, pending until {@link confirmTotp}. */
      setupTotp: () => authed('POST', '/mfa/totp/setup') as Promise<unknown> as Promise<TotpSetup>,
      /** Confirms TOTP with a current code; recovery codes come when it is the first factor. */
      confirmTotp: (code: string) =>
        authed('POST', '/mfa/totp/confirm', { code }).then(mfaResult) as Promise<{ mfa: MfaSummary; recoveryCodes?: string[] }>,
      /** `password`: omitted by an account without one (it needs a sign-in within the last 10 minutes instead). */
      disableTotp: (password?: string) => authed('DELETE', '/mfa/totp', { password }).then((answer) => mfaResult(answer).mfa as MfaSummary),
      /** Registers a security key or passkey: runs the browser ceremony. */
      async addSecurityKey(input: { name?: string; passkey?: boolean } = {}) {
        const optionsJSON = await authed('POST', '/mfa/webauthn/register/options', input);
        const response = await webauthnResponse((browser, o) => browser.startRegistration({ optionsJSON: o }), optionsJSON);
        return mfaResult(
          await authed('POST', '/mfa/webauthn/register/verify', { response, ...(input.name ? { name: input.name } : {}) }),
        ) as {
          credential: { id: string; name: string; createdAt: string };
          mfa: MfaSummary;
          recoveryCodes?: string[];
        };
      },
      removeSecurityKey: (credentialId: string, password?: string) =>
        authed('DELETE', `/mfa/webauthn/${encodeURIComponent(credentialId)}`, { password }).then(
          (answer) => mfaResult(answer).mfa as MfaSummary,
        ),
      /** New recovery codes; the previous ones stop working. */
      regenerateRecoveryCodes: (password?: string) =>
        authed('POST', '/mfa/recovery-codes', { password }).then((answer) => answer.recoveryCodes as string[]),
    },

    /** Stops timers and the cross-tab channel (the session itself goes on). */
    destroy(): void {
      clearTimeout(timer);
      tabs.close();
      subscribers.clear();
    },
  };
  return client;
}

export type IdentityClient = ReturnType<typeof createIdentityClient>;
