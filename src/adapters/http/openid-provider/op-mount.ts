import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectThrottlerStorage, ThrottlerStorage } from '@nestjs/throttler';
import express from 'express';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { EmailCodeSignInUseCase } from '../../../application/auth/email-code-sign-in.use-case';
import { LoginUseCase } from '../../../application/auth/login.use-case';
import { ExchangeLoginCodeUseCase } from '../../../application/federation/exchange-login-code.use-case';
import { ListIdentityProvidersUseCase } from '../../../application/federation/list-identity-providers.use-case';
import { StartFederationUseCase } from '../../../application/federation/start-federation.use-case';
import { RequestEmailCodeUseCase } from '../../../application/auth/request-email-code.use-case';
import { VerifyMfaUseCase } from '../../../application/mfa/verify-mfa.use-case';
import { MfaChallenges } from '../../../application/sign-in/mfa-challenges';
import { AppConfig } from '../../../config/app-config';
import { DomainError } from '../../../domain/errors';
import { Realm } from '../../../domain/realm/realm';
import { Email } from '../../../domain/user/email';
import type { InteractionDetails, OidcProvider } from '../../openid-provider/oidc-provider-library';
import {
  consentPage,
  emailCodePage,
  FormTarget,
  messagePage,
  PageContext,
  secondFactorPage,
  signInPage,
} from '../../openid-provider/op-pages';
import { RealmProviders } from '../../openid-provider/realm-providers';
import { CONSOLE_CSP } from '../console/console-pages';
import { renderError } from '../errors/render-error';
import { DeferredWork } from '../deferred-work';
import { RateLimitName } from '../decorators';
import { ipTracker, limitKey } from '../guards/rate-limit.guard';
import { clientContext } from '../request-context';
import { OpRegistrationEndpoint } from './op-registration';
import { OpTokenLimits } from './op-token-limits';

/** `/realms/{id}` and what follows: the realm's provider endpoints and its pages. */
const UNDER_REALM = /^\/realms\/([^/?#]+)(\/[^?#]*)?(\?.*)?$/;
/** RFC 8414's address of a realm's metadata. */
const AUTHORIZATION_SERVER_METADATA = /^\/\.well-known\/oauth-authorization-server\/realms\/([^/?#]+)\/?(\?.*)?$/;
const INTERACTION =
  /^\/interaction\/([A-Za-z0-9_-]{1,64})(?:\/(login|mfa|consent|email-code|email-code-verify|email-code-restart|federation))?\/?$/;
const MAX_FORM_BYTES = '8kb';
/** Wrong device codes from one client IP, all its browsers together: this many times a browser's limit. */
const IP_DEVICE_CODE_FACTOR = 10;

type PendingMfa = { mfaToken: string; amr: string[] };
/** A code was asked for this address: the page asks for it. */
type PendingEmailCode = { email: string };
/** An identity provider's sign-in started here: the verifier of the login code's PKCE challenge. */
type PendingFederation = { codeVerifier: string };
type Interaction = InteractionDetails & {
  pendingMfa?: PendingMfa;
  pendingEmailCode?: PendingEmailCode;
  pendingFederation?: PendingFederation;
};

function sendError(res: Response, error: DomainError): void {
  const rendered = renderError(error);
  for (const [name, value] of Object.entries(rendered.headers)) res.setHeader(name, value);
  res.status(rendered.status).json(rendered.body);
}

/** What a refused sign-in shows on the page (never as JSON). */
function signInMessage(error: DomainError): string {
  switch (error.code) {
    case 'ACCOUNT_LOCKED':
      return 'This account is temporarily locked after too many failed sign-ins. Try again later.';
    case 'ACCOUNT_SUSPENDED':
      return 'This account is suspended.';
    case 'EMAIL_NOT_VERIFIED':
      return 'Verify your email address before signing in: use the link in the email we sent.';
    case 'RATE_LIMITED':
      return 'Too many attempts. Try again later.';
    case 'SSO_REQUIRED':
      return 'Your organization signs you in through its own identity provider: use it instead of a password.';
    case 'INVALID_MFA_CODE':
      return 'That code is not valid.';
    case 'VALIDATION_FAILED':
      return 'Enter a valid email address.';
    case 'HOOK_DENIED':
      // The realm's own words, written for the user.
      return error.message;
    case 'HOOK_FAILED':
      return 'Signing in is not possible right now. Try again in a moment.';
    case 'TOKEN_EXPIRED':
    case 'INVALID_TOKEN':
      return 'This sign-in has expired. Sign in again.';
    default:
      return 'Invalid email or password.';
  }
}

/**
 * Every realm an OpenID provider: requests under `/realms/{id}/` go to the realm's
 * provider as if it were mounted there (the prefix stripped from `url`, `originalUrl` kept), and
 * never reach Nest or its JSON body parser. Its interaction pages (`/realms/{id}/interaction/…`)
 * are the service's: sign-in through the service's own pipeline, second factor, consent.
 */
@Injectable()
export class OpenIdProviderMount {
  private readonly callbacks = new WeakMap<OidcProvider, ReturnType<OidcProvider['callback']>>();
  private readonly parseForm = express.urlencoded({ extended: false, limit: MAX_FORM_BYTES, parameterLimit: 20 });

  constructor(
    private readonly providers: RealmProviders,
    private readonly login: LoginUseCase,
    private readonly verifyMfa: VerifyMfaUseCase,
    private readonly config: AppConfig,
    @InjectThrottlerStorage() private readonly limits: ThrottlerStorage,
    private readonly registration: OpRegistrationEndpoint,
    private readonly tokenLimits: OpTokenLimits,
    private readonly mfaChallenges: MfaChallenges,
    private readonly requestEmailCode: RequestEmailCodeUseCase,
    private readonly emailCodeSignIn: EmailCodeSignInUseCase,
    private readonly deferred: DeferredWork,
    private readonly identityProviders: ListIdentityProvidersUseCase,
    private readonly startFederation: StartFederationUseCase,
    private readonly exchangeLoginCode: ExchangeLoginCodeUseCase,
  ) {}

  handler(): RequestHandler {
    return (req, res, next) => {
      const url = req.url;
      if (!url.startsWith('/realms/') && !url.startsWith('/.well-known/oauth-authorization-server/')) return next();
      this.route(req, res, next).catch(next);
    };
  }

  private async route(req: Request, res: Response, next: NextFunction): Promise<void> {
    const metadata = AUTHORIZATION_SERVER_METADATA.exec(req.url);
    const under = metadata ? null : UNDER_REALM.exec(req.url);
    if (!metadata && !under) return next();
    const realmId = decodedSegment((metadata ?? under)![1]);
    const realm = await this.providers.realm(realmId);
    if (!realm) return sendError(res, new DomainError('REALM_NOT_FOUND', `Realm "${realmId}" does not exist`));
    if (!realm.enabled) return sendError(res, new DomainError('REALM_DISABLED', 'This realm is disabled'));
    const provider = await this.providers.providerFor(realm);
    const prefix = `/realms/${realm.id}`;
    let rest: string;
    if (metadata) {
      // The same document as the provider's discovery; its endpoints resolve under the realm.
      rest = `/.well-known/openid-configuration${metadata[2] ?? ''}`;
      req.originalUrl = `${prefix}${rest}`;
    } else {
      rest = `${under![2] || '/'}${under![3] ?? ''}`;
      const interaction = INTERACTION.exec(under![2] ?? '');
      if (interaction) return this.interaction(req, res, realm, provider, interaction[1], interaction[2] ?? null);
    }
    // As Express mounting would: the provider sees its own paths; `originalUrl` keeps the whole.
    // Its endpoints are named at API_URL (the service's own address), never at a Host header.
    const api = new URL(this.config.apiUrl);
    req.headers['x-forwarded-host'] = api.host;
    req.headers['x-forwarded-proto'] = api.protocol.slice(0, -1);
    req.url = rest;
    (req as { baseUrl: string }).baseUrl = prefix;
    // The logout and device pages are the service's, under the console's CSP (the provider widens it per page).
    const path = rest.split('?')[0];
    if (path.startsWith('/session/end') || path.startsWith('/device')) res.setHeader('Content-Security-Policy', CONSOLE_CSP);
    if (path === '/device' && req.method === 'POST' && (await this.deviceCodeRefused(req, res, realm, provider))) return;
    if (path === '/token' && req.method === 'POST' && (await this.tokenLimits.refused(req, res, realm))) return;
    // Dynamic registration is the service's (its clients are the admin API's); absent while closed.
    if (path === '/reg' && req.method === 'POST' && realm.policy.clientRegistration !== 'closed') {
      return this.registration.handle(req, res, realm);
    }
    this.callbackOf(provider)(req, res);
  }

  /** The provider's request handler, composed once per provider (Koa composes its middleware on every `callback()`). */
  private callbackOf(provider: OidcProvider): ReturnType<OidcProvider['callback']> {
    let callback = this.callbacks.get(provider);
    if (!callback) this.callbacks.set(provider, (callback = provider.callback()));
    return callback;
  }

  /** The service's pages for one interaction: GET shows what the prompt needs, POST answers it. */
  private async interaction(req: Request, res: Response, realm: Realm, provider: OidcProvider, uid: string, step: string | null) {
    res.setHeader('Cache-Control', 'no-store');
    let details: Interaction;
    try {
      details = (await provider.interactionDetails(req, res)) as Interaction;
    } catch {
      return this.page(res, 400, messagePage('Sign-in expired', 'This sign-in request has expired. Go back to the app and start again.'));
    }
    if (details.uid !== uid) {
      return this.page(res, 400, messagePage('Sign-in expired', 'This sign-in request has expired. Go back to the app and start again.'));
    }
    const client = await provider.Client.find(String(details.params.client_id ?? ''));
    const context: PageContext = { realmName: realm.name, clientName: String(client?.clientName ?? client?.clientId ?? 'the app') };
    const redirectOrigin = originOf(String(details.params.redirect_uri ?? ''));
    const base = `/realms/${realm.id}/interaction/${uid}`;
    const form = async (name: string): Promise<FormTarget> => ({ action: `${base}/${name}`, csrf: await this.csrf(realm.id, uid, name) });
    const show = async (status = 200, error: string | null = null, email?: string) => {
      if (details.prompt.name === 'login') {
        if (details.pendingMfa) return this.page(res, status, secondFactorPage(context, await form('mfa'), { error }), redirectOrigin);
        if (details.pendingEmailCode) {
          const forms = { verify: await form('email-code-verify'), restart: await form('email-code-restart') };
          return this.page(res, status, emailCodePage(context, forms, { email: details.pendingEmailCode.email, error }), redirectOrigin);
        }
        const emailCode = await form('email-code');
        const enabled = await this.identityProviders.execute({ realmId: realm.id, enabledOnly: true });
        const list = enabled.map((p) => ({ alias: p.alias, displayName: p.displayName }));
        // The button's answer redirects to the provider: browsers apply `form-action` to it.
        const origins = new Set([redirectOrigin, ...enabled.map((p) => originOf(String(p.metadata.authorization_endpoint ?? '')))]);
        const formOrigins = [...origins].filter(Boolean).join(' ') || null;
        const providers = { form: await form('federation'), list };
        return this.page(res, status, signInPage(context, await form('login'), { error, email, emailCode, providers }), formOrigins);
      }
      if (details.prompt.name === 'consent') {
        const missing = details.prompt.details as { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };
        const page = consentPage(context, await form('consent'), missing.missingOIDCScope ?? [], missing.missingResourceScopes ?? {});
        return this.page(res, status, page, redirectOrigin);
      }
      return this.page(res, 400, messagePage('Sign-in error', 'This sign-in request cannot be completed.'));
    };
    if (req.method === 'GET' && step === 'federation' && details.prompt.name === 'login') {
      return this.federationReturned(req, res, realm, provider, details, show);
    }
    if (req.method === 'GET' || req.method === 'HEAD') return show();
    if (req.method !== 'POST' || !step) return this.page(res, 405, messagePage('Not allowed', 'This page takes no such request.'));
    await new Promise<void>((resolve, reject) => this.parseForm(req, res, (error?: unknown) => (error ? reject(error) : resolve())));
    const body = (req.body ?? {}) as Record<string, unknown>;
    const field = (name: string) => (typeof body[name] === 'string' ? (body[name] as string) : '');
    if (!(await this.csrfMatches(realm.id, uid, step, field('csrf')))) {
      return this.page(
        res,
        403,
        messagePage('Form expired', 'This form has expired or did not come from this page. Reload the page and try again.'),
      );
    }
    const now = Math.floor(Date.now() / 1000);
    if (step === 'login' && details.prompt.name === 'login') {
      const retryAfter = await this.loginLimited(req);
      if (retryAfter !== null) {
        res.setHeader('Retry-After', String(retryAfter));
        return show(429, signInMessage(new DomainError('RATE_LIMITED', 'Too many requests')), field('email'));
      }
      try {
        const outcome = await this.login.execute({
          realm,
          email: field('email'),
          password: field('password'),
          client: clientContext(req),
          clientId: String(details.params.client_id ?? ''),
        });
        if (outcome.kind === 'mfa-required') {
          details.pendingMfa = { mfaToken: outcome.mfaToken, amr: ['pwd'] };
          await details.save(details.exp - now);
          return show(200);
        }
        return this.signedIn(req, res, provider, outcome.user.id, outcome.sessionId, ['pwd']);
      } catch (error) {
        if (!(error instanceof DomainError)) throw error;
        const status =
          error.code === 'RATE_LIMITED'
            ? 429
            : error.code === 'SSO_REQUIRED'
              ? 403
              : error.code.startsWith('HOOK_')
                ? renderError(error).status
                : 401;
        return show(status, signInMessage(error), field('email'));
      }
    }
    if (step === 'email-code' && details.prompt.name === 'login' && !details.pendingMfa) {
      return this.emailCodeRequested(req, res, realm, details, field('email'), show);
    }
    if (step === 'email-code-verify' && details.prompt.name === 'login' && details.pendingEmailCode && !details.pendingMfa) {
      return this.emailCodeEntered(req, res, realm, provider, details, field('code'), show);
    }
    if (step === 'email-code-restart' && details.prompt.name === 'login' && !details.pendingMfa) {
      const email = details.pendingEmailCode?.email;
      details.pendingEmailCode = undefined;
      await details.save(details.exp - now);
      return show(200, null, email);
    }
    if (step === 'federation' && details.prompt.name === 'login' && !details.pendingMfa) {
      return this.federationStarted(req, res, realm, details, base, field('alias'), show);
    }
    if (step === 'mfa' && details.prompt.name === 'login' && details.pendingMfa) {
      const retryAfter = await this.mfaLimited(req, realm, details.pendingMfa.mfaToken);
      if (retryAfter !== null) {
        res.setHeader('Retry-After', String(retryAfter));
        return show(429, signInMessage(new DomainError('RATE_LIMITED', 'Too many requests')));
      }
      const code = field('code').trim();
      const type = /^\d{6,8}$/.test(code) ? 'totp' : 'recovery';
      try {
        const verified = await this.verifyMfa.execute({
          realm,
          mfaToken: details.pendingMfa.mfaToken,
          type,
          code,
          client: clientContext(req),
        });
        const amr = [...details.pendingMfa.amr, 'otp'];
        return this.signedIn(req, res, provider, verified.user.id, verified.sessionId, amr);
      } catch (error) {
        if (!(error instanceof DomainError)) throw error;
        if (error.code === 'INVALID_TOKEN' || error.code === 'TOKEN_EXPIRED') {
          details.pendingMfa = undefined;
          await details.save(details.exp - now);
        }
        return show(error.code === 'HOOK_FAILED' ? 503 : 401, signInMessage(error));
      }
    }
    if (step === 'consent' && details.prompt.name === 'consent') {
      if (field('decision') !== 'allow') {
        return provider.interactionFinished(
          req,
          res,
          { error: 'access_denied', error_description: 'The user denied the request' },
          { mergeWithLastSubmission: false },
        );
      }
      return this.consented(req, res, provider, details);
    }
    return show(409, 'This step is already done. Continue below.');
  }

  /**
   * "Email me a code": the request use case of POST /email-code, under its limits (per address
   * and per client IP, the same counters). The page that follows is the same whether or not the
   * address has an account; the email goes out after the answer, as the API's does.
   */
  private async emailCodeRequested(
    req: Request,
    res: Response,
    realm: Realm,
    details: Interaction,
    email: string,
    show: (status?: number, error?: string | null, email?: string) => Promise<void>,
  ): Promise<void> {
    const retryAfter =
      (await this.limited('emailCode', `email:${realm.id}:${Email.normalise(email)}`)) ??
      (await this.limited('emailCodeIp', ipTracker(req)));
    if (retryAfter !== null) {
      res.setHeader('Retry-After', String(retryAfter));
      return show(429, signInMessage(new DomainError('RATE_LIMITED', 'Too many requests')), email);
    }
    let accepted: ReturnType<RequestEmailCodeUseCase['execute']>;
    try {
      accepted = this.requestEmailCode.execute({ realm, email });
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return show(400, signInMessage(error), email);
    }
    details.pendingEmailCode = { email: Email.normalise(email) };
    await details.save(details.exp - Math.floor(Date.now() / 1000));
    await show(200);
    this.deferred.run('sign-in code request', accepted.send);
  }

  /**
   * The emailed code typed in: the sign-in use case of POST /email-code/verify under its limit
   * (signInVerify, per client IP); every refusal shown alike on the page. A user with MFA goes
   * on to the second-factor page (`amr` `["email", "otp"]`).
   */
  private async emailCodeEntered(
    req: Request,
    res: Response,
    realm: Realm,
    provider: OidcProvider,
    details: Interaction,
    code: string,
    show: (status?: number, error?: string | null, email?: string) => Promise<void>,
  ): Promise<void> {
    const retryAfter = await this.limited('signInVerify', ipTracker(req));
    if (retryAfter !== null) {
      res.setHeader('Retry-After', String(retryAfter));
      return show(429, signInMessage(new DomainError('RATE_LIMITED', 'Too many requests')));
    }
    try {
      const outcome = await this.emailCodeSignIn.execute({
        realm,
        proof: { email: details.pendingEmailCode!.email, code },
        client: clientContext(req),
      });
      details.pendingEmailCode = undefined;
      if (outcome.kind === 'mfa-required') {
        details.pendingMfa = { mfaToken: outcome.mfaToken, amr: ['email'] };
        await details.save(details.exp - Math.floor(Date.now() / 1000));
        return show(200);
      }
      return this.signedIn(req, res, provider, outcome.user.id, outcome.sessionId, ['email']);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      const status = error.code === 'SSO_REQUIRED' ? 403 : error.code.startsWith('HOOK_') ? renderError(error).status : 401;
      const message = error.code === 'INVALID_CREDENTIALS' ? 'That code is not valid or has expired.' : signInMessage(error);
      return show(status, message);
    }
  }

  /**
   * A provider's button: the service's own federation start (its `state`, nonce and PKCE towards
   * the provider unchanged, under the `federation` limit), coming back to this interaction. The
   * login code's verifier stays in the interaction, itself bound to this browser's cookie.
   */
  private async federationStarted(
    req: Request,
    res: Response,
    realm: Realm,
    details: Interaction,
    base: string,
    alias: string,
    show: (status?: number, error?: string | null, email?: string) => Promise<void>,
  ): Promise<void> {
    const retryAfter = await this.limited('federation', ipTracker(req));
    if (retryAfter !== null) {
      res.setHeader('Retry-After', String(retryAfter));
      return show(429, signInMessage(new DomainError('RATE_LIMITED', 'Too many requests')));
    }
    const codeVerifier = randomBytes(32).toString('base64url');
    const codeChallenge = createHash('sha256').update(codeVerifier).digest('base64url');
    let started: { authorizationUrl: string };
    try {
      const returnTo = `${new URL(this.config.apiUrl).origin}${base}/federation`;
      started = await this.startFederation.execute({ realm, alias, returnTo, codeChallenge, client: clientContext(req) });
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return show(400, 'That way of signing in is not available.');
    }
    details.pendingEmailCode = undefined;
    details.pendingFederation = { codeVerifier };
    await details.save(details.exp - Math.floor(Date.now() / 1000));
    res.redirect(303, started.authorizationUrl);
  }

  /**
   * Back from the identity provider (the service's callback sent the browser here with `code` or
   * `error`): the login code redeemed as POST /federation/exchange would, with the verifier this
   * interaction holds, once; the sign-in then finishes here (`amr` `["fed"]`, MFA as a login's).
   */
  private async federationReturned(
    req: Request,
    res: Response,
    realm: Realm,
    provider: OidcProvider,
    details: Interaction,
    show: (status?: number, error?: string | null, email?: string) => Promise<void>,
  ): Promise<void> {
    const pending = details.pendingFederation;
    const code = typeof req.query.code === 'string' ? req.query.code : '';
    if (!pending || !code || details.pendingMfa) {
      const cancelled = req.query.error === 'access_denied';
      return show(cancelled ? 200 : 400, cancelled ? null : 'Signing in with that provider did not work. Try again or use another way.');
    }
    details.pendingFederation = undefined;
    await details.save(details.exp - Math.floor(Date.now() / 1000));
    try {
      const outcome = await this.exchangeLoginCode.execute({ realm, code, codeVerifier: pending.codeVerifier, client: clientContext(req) });
      if (outcome.kind === 'mfa-required') {
        details.pendingMfa = { mfaToken: outcome.mfaToken, amr: ['fed'] };
        await details.save(details.exp - Math.floor(Date.now() / 1000));
        return show(200);
      }
      return this.signedIn(req, res, provider, outcome.user.id, outcome.sessionId, ['fed']);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      const status = error.code.startsWith('HOOK_') ? renderError(error).status : error.code === 'INVALID_TOKEN' ? 400 : 401;
      const message =
        error.code === 'INVALID_TOKEN' ? 'Signing in with that provider did not work. Try again or use another way.' : signInMessage(error);
      return show(status, message);
    }
  }

  /** Counts one request against a row of the rate-limit table, as the API's guard does; the seconds to wait when over it, else null. */
  private async limited(name: RateLimitName, tracker: string): Promise<number | null> {
    const { limit, ttlSeconds } = this.config.rateLimits[name];
    const ttl = ttlSeconds * 1000;
    const record = await this.limits.increment(limitKey(name, tracker), ttl, limit, ttl, name);
    return record.isBlocked ? Math.max(1, record.timeToBlockExpire) : null;
  }

  /**
   * A code typed on the device page (`code`, handed on as the provider's `user_code`), or posted
   * with the confirmation's `confirm` or `abort`: a browser
   * that entered RATE_LIMIT_DEVICE_CODE wrong codes (5 per 10 minutes) is refused, even with
   * the right one, until its window ends. Counted per browser (its provider session cookie), per
   * client IP without one, and per client IP for all its browsers together (ten times as many).
   * True when refused (the page is answered).
   */
  private async deviceCodeRefused(req: Request, res: Response, realm: Realm, provider: OidcProvider): Promise<boolean> {
    await new Promise<void>((resolve, reject) => this.parseForm(req, res, (error?: unknown) => (error ? reject(error) : resolve())));
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (typeof body.code === 'string' && body.user_code === undefined) {
      body.user_code = body.code;
      delete body.code;
    }
    const code = typeof body.user_code === 'string' ? body.user_code : '';
    // A code posted with `confirm` or `abort` is looked up all the same (the confirmation form
    // carries it): those count too, or they would be a way round the limit.
    if (!code) return false;
    const { limit, ttlSeconds } = this.config.rateLimits.deviceCode;
    // The browser's count, and its address's: a browser that drops its cookie for a fresh one is
    // still held, by IP_DEVICE_CODE_FACTOR times the limit for everyone behind that address.
    const keyOf = (tracker: string) => createHash('sha256').update(`device-code\n${tracker}`).digest('base64url');
    const counters = [
      { key: keyOf(browserOf(req)), limit },
      { key: keyOf(`all:${ipTracker(req)}`), limit: limit * IP_DEVICE_CODE_FACTOR },
    ];
    const refuse = (retryAfterSeconds: number) => {
      res.setHeader('Retry-After', String(retryAfterSeconds));
      this.page(res, 429, messagePage('Too many wrong codes', 'Too many wrong codes were entered in this browser. Try again later.'));
      return true;
    };
    for (const counter of counters) {
      const failures = await this.providers.deviceCodeFailures(realm.id, counter.key);
      if (failures.count >= counter.limit) return refuse(failures.retryAfterSeconds);
    }
    const normalized = code.toUpperCase().replace(/\W/g, '');
    if (normalized && (await provider.DeviceCode.findByUserCode(normalized, { ignoreExpiration: true }))) return false;
    let over = false;
    for (const counter of counters) {
      if ((await this.providers.addDeviceCodeFailure(realm.id, counter.key, ttlSeconds)) > counter.limit) over = true;
    }
    return over ? refuse(ttlSeconds) : false;
  }

  /**
   * The sign-in page counts against POST /login's limit, the same counter per client IP.
   * Returns the seconds to wait when over it, else null.
   */
  private async loginLimited(req: Request): Promise<number | null> {
    const { limit, ttlSeconds } = this.config.rateLimits.login;
    const ttl = ttlSeconds * 1000;
    const record = await this.limits.increment(limitKey('login', ipTracker(req)), ttl, limit, ttl, 'login');
    return record.isBlocked ? Math.max(1, record.timeToBlockExpire) : null;
  }

  /**
   * The second-factor page counts against POST /mfa/verify's limit, the same counter: per user
   * (the one behind the pending challenge), so fresh sign-ins, each with its own challenge, add
   * no guesses. Returns the seconds to wait when over it, else null.
   */
  private async mfaLimited(req: Request, realm: Realm, mfaToken: string): Promise<number | null> {
    const { limit, ttlSeconds } = this.config.rateLimits.mfaVerify;
    const challenge = await this.mfaChallenges.find(mfaToken);
    const tracker = challenge && challenge.realmId === realm.id ? `user:${challenge.userId}` : ipTracker(req);
    const ttl = ttlSeconds * 1000;
    const record = await this.limits.increment(limitKey('mfaVerify', tracker), ttl, limit, ttl, 'mfaVerify');
    return record.isBlocked ? Math.max(1, record.timeToBlockExpire) : null;
  }

  private async signedIn(req: Request, res: Response, provider: OidcProvider, accountId: string, sessionId: string, amr: string[]) {
    const ts = Math.floor(Date.now() / 1000);
    const login = { accountId, amr, ts, remember: true, serviceSessionId: sessionId };
    await provider.interactionFinished(req, res, { login }, { mergeWithLastSubmission: false });
  }

  private async consented(req: Request, res: Response, provider: OidcProvider, details: Interaction) {
    const accountId = details.session?.accountId;
    const clientId = String(details.params.client_id ?? '');
    if (!accountId) return this.page(res, 400, messagePage('Sign-in expired', 'Sign in again.'));
    const grant = (details.grantId ? await provider.Grant.find(details.grantId) : undefined) ?? new provider.Grant({ accountId, clientId });
    const missing = details.prompt.details as {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    if (missing.missingOIDCScope?.length) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {}))
      grant.addResourceScope(resource, scopes.join(' '));
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }

  /** A form's CSRF token: bound to the realm, the interaction (itself bound to the browser's interaction cookie) and the form. */
  private async csrf(realmId: string, uid: string, form: string): Promise<string> {
    return createHmac('sha256', await this.providers.formSecret())
      .update(`${realmId}\n${uid}\n${form}`)
      .digest('base64url');
  }

  private async csrfMatches(realmId: string, uid: string, form: string, presented: string): Promise<boolean> {
    const expected = Buffer.from(await this.csrf(realmId, uid, form));
    const actual = Buffer.from(presented);
    return expected.length === actual.length && timingSafeEqual(expected, actual);
  }

  /**
   * A page under the console's CSP. The forms post here, and the answer redirects on to the app
   * (or an identity provider): browsers apply `form-action` to those redirects, so those origins
   * (space-separated) are allowed too.
   */
  private page(res: Response, status: number, html: string, redirectOrigin: string | null = null): void {
    const csp = redirectOrigin ? CONSOLE_CSP.replace("form-action 'self'", `form-action 'self' ${redirectOrigin}`) : CONSOLE_CSP;
    res.setHeader('Content-Security-Policy', csp);
    res.status(status).type('html').send(html);
  }
}

/** The browser: its provider session cookie (set on the device page before any code is posted), else its client IP. */
function browserOf(req: Request): string {
  const session = /(?:^|;\s*)op_session=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
  return session ? `session:${session}` : ipTracker(req);
}

/** A path segment as the realm id it names; a malformed escape names none (an empty id, never a realm). */
function decodedSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return '';
  }
}

function originOf(uri: string): string | null {
  try {
    const { protocol, origin } = new URL(uri);
    return protocol === 'http:' || protocol === 'https:' ? origin : null;
  } catch {
    return null;
  }
}
