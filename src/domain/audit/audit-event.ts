/** Event types of the admin API. */
export type AuditEventType =
  | 'user.registered'
  | 'user.created'
  | 'login.succeeded'
  | 'login.failed'
  | 'mfa.succeeded'
  | 'mfa.failed'
  | 'refresh.reused'
  | 'session.flagged'
  | 'session.revoked'
  | 'logout'
  | 'user.locked'
  | 'user.unlocked'
  | 'user.suspended'
  | 'user.activated'
  | 'user.deleted'
  | 'user.password_reset'
  | 'user.mfa_reset'
  | 'user.roles_changed'
  | 'user.profile_updated'
  | 'password.changed'
  | 'email.verified'
  | 'mfa.enabled'
  | 'mfa.disabled'
  | 'realm.created'
  | 'realm.updated'
  | 'dpop.refused'
  | 'webhook.created'
  | 'webhook.updated'
  | 'webhook.deleted'
  | 'webhook.secret_rotated'
  | 'admin.denied'
  | 'identity.linked'
  | 'identity.unlinked'
  | 'identity_provider.created'
  | 'identity_provider.updated'
  | 'identity_provider.deleted'
  | 'role.created'
  | 'role.deleted'
  | 'user.app_metadata_changed'
  | 'client.created'
  | 'client.updated'
  | 'client.deleted'
  | 'client.secret_rotated'
  | 'resource.created'
  | 'resource.updated'
  | 'resource.deleted'
  | 'hook.updated'
  | 'hook.deleted'
  | 'hook.secret_rotated'
  | 'hook.denied'
  | 'hook.failed'
  | 'organization.created'
  | 'organization.updated'
  | 'organization.deleted'
  | 'organization.member_added'
  | 'organization.member_removed'
  | 'organization.member_roles_changed'
  | 'organization.invitation_created'
  | 'organization.invitation_accepted'
  | 'organization.invitation_revoked';

// A record, so a type added to AuditEventType fails to compile here until it is listed (filters, webhook subscriptions).
const AUDIT_EVENT_TYPE_SET: Record<AuditEventType, true> = {
  'user.registered': true,
  'user.created': true,
  'login.succeeded': true,
  'login.failed': true,
  'mfa.succeeded': true,
  'mfa.failed': true,
  'refresh.reused': true,
  'session.flagged': true,
  'session.revoked': true,
  logout: true,
  'user.locked': true,
  'user.unlocked': true,
  'user.suspended': true,
  'user.activated': true,
  'user.deleted': true,
  'user.password_reset': true,
  'user.mfa_reset': true,
  'user.roles_changed': true,
  'user.profile_updated': true,
  'password.changed': true,
  'email.verified': true,
  'mfa.enabled': true,
  'mfa.disabled': true,
  'realm.created': true,
  'realm.updated': true,
  'dpop.refused': true,
  'webhook.created': true,
  'webhook.updated': true,
  'webhook.deleted': true,
  'webhook.secret_rotated': true,
  'admin.denied': true,
  'identity.linked': true,
  'identity.unlinked': true,
  'identity_provider.created': true,
  'identity_provider.updated': true,
  'identity_provider.deleted': true,
  'role.created': true,
  'role.deleted': true,
  'user.app_metadata_changed': true,
  'client.created': true,
  'client.updated': true,
  'client.deleted': true,
  'client.secret_rotated': true,
  'resource.created': true,
  'resource.updated': true,
  'resource.deleted': true,
  'hook.updated': true,
  'hook.deleted': true,
  'hook.secret_rotated': true,
  'hook.denied': true,
  'hook.failed': true,
  'organization.created': true,
  'organization.updated': true,
  'organization.deleted': true,
  'organization.member_added': true,
  'organization.member_removed': true,
  'organization.member_roles_changed': true,
  'organization.invitation_created': true,
  'organization.invitation_accepted': true,
  'organization.invitation_revoked': true,
};
export const AUDIT_EVENT_TYPES = Object.keys(AUDIT_EVENT_TYPE_SET) as AuditEventType[];

export interface AuditEvent {
  id: string;
  type: AuditEventType;
  realmId: string;
  userId: string | null;
  actorId: string | null;
  sessionId: string | null;
  ip: string | null;
  at: Date;
  details: Record<string, unknown>;
}

/**
 * An event as the admin API lists it (GET /v1/admin/events) and as webhook payloads carry it:
 * whitelisted fields, timestamps in ISO 8601. Details never hold a secret, token or password.
 */
export function auditEventView(event: AuditEvent) {
  return {
    id: event.id,
    type: event.type,
    realmId: event.realmId,
    userId: event.userId,
    actorId: event.actorId,
    sessionId: event.sessionId,
    ip: event.ip,
    at: event.at.toISOString(),
    details: event.details,
  };
}
