import { SETTING_LEAVES } from '../domain/realm/realm-settings';
import { AppConfig, RateLimit } from './app-config';

/** Thrown when a variable has an invalid value; the message names the variable. */
export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function str(env: Env, name: string, fallback: string): string {
  const value = env[name]?.trim();
  return value ? value : fallback;
}

function optional(env: Env, name: string): string | null {
  const value = env[name]?.trim();
  return value ? value : null;
}

function int(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function ratio(env: Env, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!/^\d*\.?\d+$/.test(raw) || value < 0 || value > 1) {
    throw new ConfigError(name, `must be a number between 0 and 1, got "${raw}"`);
  }
  return value;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (!raw) return fallback;
  if (['true', '1', 'yes', 'on'].includes(raw)) return true;
  if (['false', '0', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function rateLimit(env: Env, name: string, fallback: RateLimit): RateLimit {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const match = /^(\d+)\/(\d+)$/.exec(raw);
  if (!match || Number(match[1]) < 1 || Number(match[2]) < 1) {
    throw new ConfigError(name, `must be "count/seconds" with both at least 1, got "${raw}"`);
  }
  return { limit: Number(match[1]), ttlSeconds: Number(match[2]) };
}

function url(env: Env, name: string, fallback: string | null, protocols: string[]): string | null {
  const raw = optional(env, name) ?? fallback;
  if (raw === null) return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, 'must be a URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got ${parsed.protocol}`);
  }
  return raw;
}

function list(env: Env, name: string): string[] {
  return (env[name] ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

function trustProxy(env: Env): AppConfig['trustProxy'] {
  const raw = env.TRUST_PROXY?.trim();
  if (!raw || raw === 'off' || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  const items = list(env, 'TRUST_PROXY');
  const named = ['loopback', 'linklocal', 'uniquelocal'];
  const cidr = /^[0-9a-fA-F:.]+(\/\d{1,3})?$/;
  for (const item of items) {
    if (!named.includes(item) && !cidr.test(item)) {
      throw new ConfigError('TRUST_PROXY', `must be loopback, a hop count or a list of addresses/CIDRs, got "${item}"`);
    }
  }
  return items.length === 1 ? items[0] : items;
}

const DURATION_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** Comma-separated durations such as `5s,5m,2h` (a bare number is seconds), each 1 s to 7 days. */
function durations(env: Env, name: string, fallback: string): number[] {
  const raw = env[name]?.trim() || fallback;
  const items = raw.split(',').map((item) => item.trim());
  if (items.length > 20) throw new ConfigError(name, 'must list at most 20 durations');
  return items.map((item) => {
    const match = /^(\d+)([smhd]?)$/.exec(item);
    const seconds = match ? Number(match[1]) * DURATION_UNITS[match[2] || 's'] : NaN;
    if (!(seconds >= 1 && seconds <= 7 * 86400)) {
      throw new ConfigError(name, `must be comma-separated durations like 5s,5m,2h (each 1s to 7d), got "${item}"`);
    }
    return seconds;
  });
}

/** Rate limits of the development profile: a frontend under development signs in many times a minute. */
const DEVELOPMENT_LIMIT = { limit: 1000, ttlSeconds: 60 };
/** The development profile's CORS origins: dev servers on any local port. */
const DEVELOPMENT_ORIGINS = ['http://localhost:*', 'http://127.0.0.1:*'];
/**
 * The development profile's further WebAuthn origins, with the default RP ID `localhost`: dev
 * servers on any port of localhost (an IP address cannot be a WebAuthn RP ID, so 127.0.0.1 is not).
 */
const DEVELOPMENT_WEBAUTHN_ORIGINS = ['http://localhost:*'];

/**
 * Parses the environment once. Throws ConfigError naming the first invalid variable.
 */
export function loadConfig(env: Env = process.env): AppConfig {
  const config = new AppConfig();
  config.profile = str(env, 'APP_PROFILE', 'production') as AppConfig['profile'];
  if (!['production', 'development'].includes(config.profile)) {
    throw new ConfigError('APP_PROFILE', 'must be production or development');
  }
  const development = config.profile === 'development';
  config.port = int(env, 'PORT', 3000, 0, 65535);
  config.host = str(env, 'HOST', '0.0.0.0');
  config.databaseUrl = url(env, 'DATABASE_URL', null, ['postgres:', 'postgresql:']);
  config.dataDir = str(env, 'DATA_DIR', './data');
  config.redisUrl = url(env, 'REDIS_URL', null, ['redis:', 'rediss:']);
  config.redisKeyPrefix = env.REDIS_KEY_PREFIX?.trim() || 'identity:';
  if (!/^[A-Za-z0-9:_.-]{1,64}$/.test(config.redisKeyPrefix)) {
    throw new ConfigError('REDIS_KEY_PREFIX', 'must be 1-64 characters of letters, digits, ":", "_", "." or "-"');
  }
  config.smtpUrl = url(env, 'SMTP_URL', null, ['smtp:', 'smtps:']);
  config.mailFrom = str(env, 'MAIL_FROM', 'Identity Service <no-reply@localhost>');
  if (/[\r\n]/.test(config.mailFrom)) throw new ConfigError('MAIL_FROM', 'must not contain line breaks');
  config.publicUrl = (url(env, 'PUBLIC_URL', `http://localhost:${config.port}`, ['http:', 'https:']) as string).replace(/\/+$/, '');
  config.trustProxy = trustProxy(env);
  config.bootstrapAdminEmail = optional(env, 'BOOTSTRAP_ADMIN_EMAIL');
  config.bootstrapAdminPassword = optional(env, 'BOOTSTRAP_ADMIN_PASSWORD');
  if (!!config.bootstrapAdminEmail !== !!config.bootstrapAdminPassword) {
    throw new ConfigError(
      config.bootstrapAdminEmail ? 'BOOTSTRAP_ADMIN_PASSWORD' : 'BOOTSTRAP_ADMIN_EMAIL',
      'must be set together with its pair',
    );
  }
  // The realm settings' deployment defaults, by the rules of their descriptors.
  const settings = config as unknown as Record<string, number>;
  for (const { name, setting } of SETTING_LEAVES) {
    if (!setting.env?.read) continue;
    const { variable, read } = setting.env;
    settings[name] = read.type === 'ratio' ? ratio(env, variable, read.fallback) : int(env, variable, read.fallback, read.min, read.max);
  }
  config.refreshReuseLeewaySeconds = int(env, 'REFRESH_REUSE_LEEWAY_SECONDS', 10, 0, 3600);
  config.recentAuthMaxAgeSeconds = int(env, 'RECENT_AUTH_MAX_AGE_SECONDS', 900, 1);
  config.bcryptCost = int(env, 'BCRYPT_COST', 12, 4, 31);
  const limit = (name: string, fallback: RateLimit): RateLimit =>
    rateLimit(env, name, development ? { limit: Math.max(fallback.limit, DEVELOPMENT_LIMIT.limit), ttlSeconds: 60 } : fallback);
  config.rateLimits = {
    login: limit('RATE_LIMIT_LOGIN', { limit: 5, ttlSeconds: 900 }),
    register: limit('RATE_LIMIT_REGISTER', { limit: 3, ttlSeconds: 3600 }),
    refresh: limit('RATE_LIMIT_REFRESH', { limit: 10, ttlSeconds: 60 }),
    mfaVerify: limit('RATE_LIMIT_MFA_VERIFY', { limit: 5, ttlSeconds: 60 }),
    emailRequests: limit('RATE_LIMIT_EMAIL', { limit: 3, ttlSeconds: 3600 }),
    emailCode: limit('RATE_LIMIT_EMAIL_CODE', { limit: 3, ttlSeconds: 900 }),
    emailCodeIp: limit('RATE_LIMIT_EMAIL_CODE_IP', { limit: 10, ttlSeconds: 900 }),
    signInVerify: limit('RATE_LIMIT_SIGN_IN_VERIFY', { limit: 10, ttlSeconds: 60 }),
    federation: limit('RATE_LIMIT_FEDERATION', { limit: 30, ttlSeconds: 60 }),
    deviceCode: limit('RATE_LIMIT_DEVICE_CODE', { limit: 5, ttlSeconds: 600 }),
    opToken: limit('RATE_LIMIT_OP_TOKEN', { limit: 600, ttlSeconds: 60 }),
    opRegistration: limit('RATE_LIMIT_OP_REGISTRATION', { limit: 10, ttlSeconds: 3600 }),
    invitationAccept: limit('RATE_LIMIT_INVITATION_ACCEPT', { limit: 10, ttlSeconds: 60 }),
    default: limit('RATE_LIMIT_DEFAULT', { limit: 300, ttlSeconds: 60 }),
  };
  config.adminRequireMfa = bool(env, 'ADMIN_REQUIRE_MFA', false);
  const publicUrl = new URL(config.publicUrl);
  config.webauthnRpId = str(env, 'WEBAUTHN_RP_ID', publicUrl.hostname);
  config.webauthnRpName = str(env, 'WEBAUTHN_RP_NAME', 'Identity Service');
  config.webauthnOrigins = list(env, 'WEBAUTHN_ORIGINS');
  if (config.webauthnOrigins.length === 0) {
    config.webauthnOrigins = [publicUrl.origin];
    if (development && config.webauthnRpId === 'localhost') config.webauthnOrigins.push(...DEVELOPMENT_WEBAUTHN_ORIGINS);
  }
  for (const origin of config.webauthnOrigins) {
    // `scheme://host:*` accepts every port of that host, as in CORS_ORIGINS.
    url({ WEBAUTHN_ORIGINS: origin.replace(/:\*$/, '') }, 'WEBAUTHN_ORIGINS', null, ['http:', 'https:']);
  }
  config.corsOrigins = env.CORS_ORIGINS === undefined && development ? [...DEVELOPMENT_ORIGINS] : list(env, 'CORS_ORIGINS');
  for (const origin of config.corsOrigins) {
    // `scheme://host:*` allows every port of that host (development servers).
    url({ CORS_ORIGINS: origin.replace(/:\*$/, '') }, 'CORS_ORIGINS', null, ['http:', 'https:']);
  }
  config.apiUrl = (url(env, 'API_URL', `http://localhost:${config.port}`, ['http:', 'https:']) as string).replace(/\/+$/, '');
  if (/[?#]/.test(config.apiUrl)) throw new ConfigError('API_URL', 'must not contain a query or a fragment');
  config.dpopProofMaxAgeSeconds = int(env, 'DPOP_PROOF_MAX_AGE_SECONDS', 60, 1, 3600);
  config.logLevel = str(env, 'LOG_LEVEL', 'info');
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(config.logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of fatal, error, warn, info, debug, trace, silent`);
  }
  config.mfaEncryptionKey = optional(env, 'MFA_ENCRYPTION_KEY');
  if (config.mfaEncryptionKey && Buffer.from(config.mfaEncryptionKey, 'base64').length !== 32) {
    throw new ConfigError('MFA_ENCRYPTION_KEY', 'must be 32 bytes encoded in base64');
  }
  config.geoipDb = optional(env, 'GEOIP_DB');
  // The service's own address, where its discovery document and keys are: a resource server
  // configured with the issuer alone finds them there. The frontend's PUBLIC_URL is only for links.
  config.issuer = str(env, 'JWT_ISSUER', config.apiUrl);
  config.defaultRealm = 'default';
  config.sessionRetentionDays = int(env, 'SESSION_RETENTION_DAYS', 30, 1);
  config.auditRetentionDays = int(env, 'AUDIT_RETENTION_DAYS', 365, 1);
  config.keyRotationDays = int(env, 'KEY_ROTATION_DAYS', 90, 1);
  config.outboxPollIntervalMs = int(env, 'OUTBOX_POLL_INTERVAL_MS', 1000, 0);
  config.outboxMaxAttempts = int(env, 'OUTBOX_MAX_ATTEMPTS', 20, 1, 1000);
  config.outboxRetryBaseSeconds = int(env, 'OUTBOX_RETRY_BASE_SECONDS', 30, 1);
  config.outboxRetryMaxSeconds = int(env, 'OUTBOX_RETRY_MAX_SECONDS', 3600, config.outboxRetryBaseSeconds);
  config.outboxLeaseSeconds = int(env, 'OUTBOX_LEASE_SECONDS', 300, 60);
  config.housekeepingIntervalSeconds = int(env, 'HOUSEKEEPING_INTERVAL_SECONDS', 3600, 0);
  config.shutdownTimeoutSeconds = int(env, 'SHUTDOWN_TIMEOUT_SECONDS', 25, 1, 3600);
  config.webhookTimeoutMs = int(env, 'WEBHOOK_TIMEOUT_MS', 10000, 100, 120000);
  config.webhookRetryScheduleSeconds = durations(env, 'WEBHOOK_RETRY_SCHEDULE', '5s,5m,30m,2h,5h,10h,10h');
  config.webhookAllowHttp = bool(env, 'WEBHOOK_ALLOW_HTTP', false);
  config.webhookAllowPrivateNetworks = bool(env, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS', false);
  config.idpAllowHttp = bool(env, 'IDP_ALLOW_HTTP', false);
  config.idpAllowPrivateNetworks = bool(env, 'IDP_ALLOW_PRIVATE_NETWORKS', false);
  config.webhookSecretOverlapSeconds = int(env, 'WEBHOOK_SECRET_OVERLAP_SECONDS', 86400, 0, 30 * 86400);
  config.accountConsole = bool(env, 'ACCOUNT_CONSOLE', true);
  config.accountConsoleDir = null;
  return config;
}
