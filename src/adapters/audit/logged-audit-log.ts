import { Logger } from '@nestjs/common';
import { AuditEntry, AuditLog, AuditQuery } from '../../application/ports/audit-log';
import { Transaction } from '../../application/ports/transaction';
import { AuditEvent, AuditEventType } from '../../domain/audit/audit-event';

/** Events that record something refused or suspicious: logged at `warn`. */
const FAILURES: ReadonlySet<AuditEventType> = new Set([
  'login.failed',
  'mfa.failed',
  'refresh.reused',
  'session.flagged',
  'user.locked',
  'admin.denied',
]);

/**
 * Writes every security event as a structured log line too ("security event", with type,
 * outcome, realm, user, actor, session, client IP and the event's details), so log pipelines
 * see logins, lockouts, MFA failures, refresh-token reuse, hijack flags and admin actions without
 * reading the database. Details never hold secrets; the logger's redaction applies on top. The
 * line is written once the event is stored — after the commit of its transaction or the statement
 * of its batch — so the logs never tell of a login whose session was not written.
 */
export class LoggedAuditLog implements AuditLog {
  private readonly logger = new Logger('Audit');

  constructor(
    private readonly inner: AuditLog,
    private readonly tx: Transaction,
  ) {}

  async record(entry: AuditEntry): Promise<void> {
    await this.inner.record(entry);
    const failure = FAILURES.has(entry.type);
    const line = {
      event: entry.type,
      outcome: failure ? 'failure' : 'success',
      realm: entry.realmId,
      userId: entry.userId ?? null,
      actorId: entry.actorId ?? null,
      sessionId: entry.sessionId ?? null,
      ip: entry.ip ?? null,
      at: entry.at.toISOString(),
      details: entry.details ?? {},
    };
    this.tx.afterCommit(() => {
      if (failure) this.logger.warn(line, 'security event');
      else this.logger.log(line, 'security event');
    });
  }

  list(query: AuditQuery): Promise<{ events: AuditEvent[]; total: number }> {
    return this.inner.list(query);
  }
}
