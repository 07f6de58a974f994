import type { SettingsReadFromEnvironment } from '../domain/realm/realm-settings';

/** A `count/seconds` rate limit. */
export interface RateLimit {
  limit: number;
  ttlSeconds: number;
}

/**
 * The realm settings whose deployment default an environment variable sets (`ACCESS_TOKEN_TTL_SECONDS`,
 * `LOCKOUT_MAX_FAILURES` …): one field each, named and typed by the settings table and read by
 * `loadConfig` from it. Declared on the class below by merging.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unsafe-declaration-merging
export interface AppConfig extends SettingsReadFromEnvironment {}

/**
 * The service's configuration, parsed once from the environment by `loadConfig`.
 * Application code receives this class by injection; nothing else reads `process.env`.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class AppConfig {
  /**
   * `development` (npm run dev) relaxes the rate limits and opens CORS to local dev servers unless
   * those are set explicitly; `production` is the default and changes nothing.
   */
  profile: 'production' | 'development';
  port: number;
  host: string;
  /** PostgreSQL URL; null selects the embedded PGlite database in `dataDir`. */
  databaseUrl: string | null;
  /** Where the embedded database lives; `memory` keeps it in memory (tests). */
  dataDir: string;
  redisUrl: string | null;
  /** Prefix of every key this service writes to Redis (several deployments may share one Redis). */
  redisKeyPrefix: string;
  smtpUrl: string | null;
  mailFrom: string;
  publicUrl: string;
  /** Express `trust proxy` value; false when unset. */
  trustProxy: boolean | number | string | string[];
  bootstrapAdminEmail: string | null;
  bootstrapAdminPassword: string | null;
  refreshReuseLeewaySeconds: number;
  /** Adding a second factor needs a session signed in at most this long ago (recent authentication). */
  recentAuthMaxAgeSeconds: number;
  bcryptCost: number;
  rateLimits: {
    login: RateLimit;
    register: RateLimit;
    refresh: RateLimit;
    mfaVerify: RateLimit;
    emailRequests: RateLimit;
    /** POST /email-code per address (the second of its limits is `emailCodeIp`). */
    emailCode: RateLimit;
    emailCodeIp: RateLimit;
    /** Answers of passwordless sign-ins (email code or link, passkey), per client IP. */
    signInVerify: RateLimit;
    /** Starts of identity-provider sign-ins and the providers' callbacks, per client IP. */
    federation: RateLimit;
    /** Wrong user codes entered on the OpenID provider's device page, per browser (client IP without a cookie). */
    deviceCode: RateLimit;
    /** Requests to the OpenID provider's token endpoint, per client. */
    opToken: RateLimit;
    /** Dynamic client registrations of a realm whose registration is `open`, per client IP. */
    opRegistration: RateLimit;
    /** POST /organizations/invitations/accept, per user. */
    invitationAccept: RateLimit;
    default: RateLimit;
  };
  adminRequireMfa: boolean;
  webauthnRpId: string;
  webauthnRpName: string;
  webauthnOrigins: string[];
  /** Exact origins, or `scheme://host:*` for every port of a host. */
  corsOrigins: string[];
  /** The service's own public base URL, without a trailing slash: DPoP `htu` and the cookie-transport origin check. */
  apiUrl: string;
  /** How far a DPoP proof's `iat` may be from the server clock, either way. */
  dpopProofMaxAgeSeconds: number;
  logLevel: string;
  /** 32-byte key (base64) for encrypting TOTP secrets; null → a key generated and kept in the database. */
  mfaEncryptionKey: string | null;
  geoipDb: string | null;
  /** `iss` of access tokens (`JWT_ISSUER`, by default `apiUrl`). */
  issuer: string;
  defaultRealm: string;
  sessionRetentionDays: number;
  auditRetentionDays: number;
  keyRotationDays: number;
  /** Milliseconds between outbox dispatcher polls; 0 disables the dispatcher in this process. */
  outboxPollIntervalMs: number;
  /** Delivery attempts before an outbox message is marked failed (kept, never dropped). */
  outboxMaxAttempts: number;
  /** First retry delay; doubles with every failed attempt up to `outboxRetryMaxSeconds`. */
  outboxRetryBaseSeconds: number;
  outboxRetryMaxSeconds: number;
  /** How long a claimed message stays reserved for one dispatcher; after that it is due again. */
  outboxLeaseSeconds: number;
  /** Seconds between housekeeping runs; 0 disables it in this process. */
  housekeepingIntervalSeconds: number;
  /** On SIGTERM, how long in-flight requests may run before their connections are cut. */
  shutdownTimeoutSeconds: number;
  /** How long one webhook delivery attempt may take (connect, send, answer) before it counts as failed. */
  webhookTimeoutMs: number;
  /** Delays before the 2nd, 3rd … attempt of a webhook delivery; after the last one it is failed. */
  webhookRetryScheduleSeconds: number[];
  /** Accept `http://` webhook URLs (development and tests only). */
  webhookAllowHttp: boolean;
  /** Accept webhook URLs that resolve to loopback, private, link-local … addresses (development and tests only). */
  webhookAllowPrivateNetworks: boolean;
  /** After a secret rotation, how long the previous secret signs beside the new one. */
  webhookSecretOverlapSeconds: number;
  /** Accept identity providers at http:// issuers (development and tests only). */
  idpAllowHttp: boolean;
  /** Accept identity providers that resolve to loopback, private, link-local … addresses (development and tests only). */
  idpAllowPrivateNetworks: boolean;
  /** Serve the account console (`/account/`) and the pages the emails link to (`/verify-email`, `/reset-password`). */
  accountConsole: boolean;
  /** Where the built console is read from; null: `dist/console` of the running service (tests point elsewhere). */
  accountConsoleDir: string | null;
}
