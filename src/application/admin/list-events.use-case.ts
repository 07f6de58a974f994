import { Injectable } from '@nestjs/common';
import { AuditEvent, AuditEventType } from '../../domain/audit/audit-event';
import { AuditLog } from '../ports/audit-log';

export interface ListEventsInput {
  realmId: string;
  type?: AuditEventType;
  userId?: string;
  since?: Date;
  page: number;
  limit: number;
}

@Injectable()
export class ListEventsUseCase {
  constructor(private readonly audit: AuditLog) {}

  /** The realm's audit events, newest first. */
  execute(input: ListEventsInput): Promise<{ events: AuditEvent[]; total: number }> {
    return this.audit.list(input);
  }
}
