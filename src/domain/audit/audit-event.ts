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
  | 'password.changed'
  | 'email.verified'
  | 'mfa.enabled'
  | 'mfa.disabled'
  | 'realm.created'
  | 'realm.updated'
  | 'dpop.refused';

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
