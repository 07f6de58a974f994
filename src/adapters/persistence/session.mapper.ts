import { DeviceType, Session, SessionStatus } from '../../domain/session/session';
import { SessionRecord } from './records/session.record';

export const SESSION_COLUMNS = `
  s.id, s.realm_id AS "realmId", s.user_id AS "userId", s.device_id AS "deviceId", s.device_name AS "deviceName",
  s.device_type AS "deviceType", s.fingerprint, s.reference_fingerprint AS "referenceFingerprint", s.ip, s.country,
  s.city, s.user_agent AS "userAgent", s.amr, s.dpop_jkt AS "dpopJkt", s.status, s.flag_reason AS "flagReason", s.flag_score AS "flagScore",
  s.flagged_at AS "flaggedAt", s.created_at AS "createdAt", s.last_active_at AS "lastActiveAt",
  s.expires_at AS "expiresAt", s.revoked_at AS "revokedAt", s.revoke_reason AS "revokeReason",
  s.active_organization_id AS "activeOrganizationId"`;

/**
 * SQL for "neither revoked nor expired" at $now under the realm's lifetime: idle timeout in
 * seconds at $idle, maximum lifetime at $max (as `Session.isLive`).
 */
export const LIVE = (now: string, idle: string, max: string) =>
  `s.revoked_at IS NULL AND s.expires_at > ${now} AND s.last_active_at > ${now}::timestamptz - make_interval(secs => ${idle})` +
  ` AND s.created_at > ${now}::timestamptz - make_interval(secs => ${max})`;

/**
 * The session `id` as a subquery PostgreSQL plans on its own (OFFSET 0 keeps outer conditions
 * out of it): always its primary key. Conditions that match a partial index of a realm's open
 * sessions (realm, `revoked_at IS NULL`, `expires_at`) must not compete with it, since a plan made
 * without statistics (a table autovacuum has not analysed yet) can rate both at one row.
 */
export const sessionById = (id: string) => `(SELECT * FROM sessions WHERE id = ${id} OFFSET 0)`;

/**
 * SQL for "not revoked, but ended by time at $now" (the open sessions `LIVE` leaves out): idle
 * longer than $idle seconds, past its absolute end, or older than $max seconds.
 */
export const ENDED_OPEN = (now: string, idle: string, max: string) =>
  `s.revoked_at IS NULL AND (s.expires_at <= ${now} OR s.last_active_at <= ${now}::timestamptz - make_interval(secs => ${idle})` +
  ` OR s.created_at <= ${now}::timestamptz - make_interval(secs => ${max}))`;

export function toSession(record: SessionRecord): Session {
  return Session.restore({
    id: record.id,
    realmId: record.realmId,
    userId: record.userId,
    device: {
      id: record.deviceId,
      name: record.deviceName,
      type: record.deviceType as DeviceType,
      fingerprint: record.fingerprint,
    },
    referenceFingerprint: record.referenceFingerprint,
    ip: record.ip,
    location: { country: record.country, city: record.city },
    userAgent: record.userAgent,
    amr: record.amr ?? [],
    dpopJkt: record.dpopJkt ?? null,
    status: record.status as SessionStatus,
    flag:
      record.status === 'flagged' && record.flaggedAt
        ? { reason: 'fingerprint_mismatch', score: Number(record.flagScore ?? 0), flaggedAt: new Date(record.flaggedAt) }
        : null,
    createdAt: new Date(record.createdAt),
    lastActiveAt: new Date(record.lastActiveAt),
    maxExpiresAt: new Date(record.expiresAt),
    revokedAt: record.revokedAt ? new Date(record.revokedAt) : null,
    revokeReason: record.revokeReason,
    activeOrganizationId: record.activeOrganizationId ?? null,
  });
}

export function toSessionRecord(session: Session): SessionRecord {
  const state = session.snapshot();
  const record = new SessionRecord();
  record.id = state.id;
  record.realmId = state.realmId;
  record.userId = state.userId;
  record.deviceId = state.device.id;
  record.deviceName = state.device.name;
  record.deviceType = state.device.type;
  record.fingerprint = state.device.fingerprint;
  record.referenceFingerprint = state.referenceFingerprint ?? {};
  record.ip = state.ip;
  record.country = state.location.country;
  record.city = state.location.city;
  record.userAgent = state.userAgent;
  record.amr = state.amr;
  record.dpopJkt = state.dpopJkt;
  record.status = state.status;
  record.flagReason = state.flag?.reason ?? null;
  record.flagScore = state.flag?.score ?? null;
  record.flaggedAt = state.flag?.flaggedAt ?? null;
  record.createdAt = state.createdAt;
  record.lastActiveAt = state.lastActiveAt;
  record.expiresAt = state.maxExpiresAt;
  record.revokedAt = state.revokedAt;
  record.revokeReason = state.revokeReason;
  return record;
}
