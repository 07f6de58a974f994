import { Realm } from '../../domain/realm/realm';
import { RealmSettings, Registration } from '../../domain/realm/realm-settings';
import { RealmRecord } from './records/realm.record';

/** The realm's columns as `RealmRecord` fields, for raw queries. */
export const REALM_COLUMNS = `
  id, name, enabled, public_url AS "publicUrl", webauthn_rp_id AS "webauthnRpId", webauthn_rp_name AS "webauthnRpName",
  webauthn_origins AS "webauthnOrigins", registration, require_verified_email AS "requireVerifiedEmail",
  access_token_ttl_seconds AS "accessTokenTtlSeconds", session_idle_timeout_seconds AS "sessionIdleTimeoutSeconds",
  session_max_lifetime_seconds AS "sessionMaxLifetimeSeconds", lockout_max_failures AS "lockoutMaxFailures",
  lockout_duration_seconds AS "lockoutDurationSeconds", password_min_length AS "passwordMinLength",
  fingerprint_match_threshold AS "fingerprintMatchThreshold", allowed_return_urls AS "allowedReturnUrls", created_at AS "createdAt", updated_at AS "updatedAt"`;

export function toRealm(record: RealmRecord, defaults: RealmSettings): Realm {
  return Realm.restore(
    {
      id: record.id,
      name: record.name,
      enabled: record.enabled,
      overrides: {
        publicUrl: record.publicUrl,
        webauthn: { rpId: record.webauthnRpId, rpName: record.webauthnRpName, origins: record.webauthnOrigins },
        registration: record.registration as Registration | null,
        requireVerifiedEmail: record.requireVerifiedEmail,
        accessTokenTtlSeconds: record.accessTokenTtlSeconds,
        sessionIdleTimeoutSeconds: record.sessionIdleTimeoutSeconds,
        sessionMaxLifetimeSeconds: record.sessionMaxLifetimeSeconds,
        lockout: { maxFailures: record.lockoutMaxFailures, durationSeconds: record.lockoutDurationSeconds },
        passwordMinLength: record.passwordMinLength,
        fingerprintMatchThreshold: record.fingerprintMatchThreshold === null ? null : Number(record.fingerprintMatchThreshold),
        allowedReturnUrls: record.allowedReturnUrls,
      },
      createdAt: new Date(record.createdAt),
      updatedAt: new Date(record.updatedAt),
    },
    defaults,
  );
}

export function toRealmRecord(realm: Realm): RealmRecord {
  const state = realm.snapshot();
  const o = state.overrides;
  const record = new RealmRecord();
  record.id = state.id;
  record.name = state.name;
  record.enabled = state.enabled;
  record.publicUrl = o.publicUrl;
  record.webauthnRpId = o.webauthn.rpId;
  record.webauthnRpName = o.webauthn.rpName;
  record.webauthnOrigins = o.webauthn.origins;
  record.registration = o.registration;
  record.requireVerifiedEmail = o.requireVerifiedEmail;
  record.accessTokenTtlSeconds = o.accessTokenTtlSeconds;
  record.sessionIdleTimeoutSeconds = o.sessionIdleTimeoutSeconds;
  record.sessionMaxLifetimeSeconds = o.sessionMaxLifetimeSeconds;
  record.lockoutMaxFailures = o.lockout.maxFailures;
  record.lockoutDurationSeconds = o.lockout.durationSeconds;
  record.passwordMinLength = o.passwordMinLength;
  record.fingerprintMatchThreshold = o.fingerprintMatchThreshold;
  record.allowedReturnUrls = o.allowedReturnUrls;
  record.createdAt = state.createdAt;
  record.updatedAt = state.updatedAt;
  return record;
}
