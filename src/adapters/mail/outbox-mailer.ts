import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Clock } from '../../application/ports/clock';
import { Mailer, OutgoingEmail } from '../../application/ports/mailer';
import { EmailOutboxRecord } from '../persistence/records/email-outbox.record';
import { TypeOrmTransaction } from '../persistence/typeorm-transaction';

/** Writes messages to the outbox in the caller's transaction; the dispatcher delivers them. */
@Injectable()
export class OutboxMailer implements Mailer {
  constructor(
    private readonly tx: TypeOrmTransaction,
    private readonly clock: Clock,
  ) {}

  async enqueue(message: OutgoingEmail): Promise<void> {
    const now = this.clock.now();
    await this.tx.manager.getRepository(EmailOutboxRecord).insert({
      id: randomUUID(),
      realmId: message.realmId,
      recipient: message.to,
      subject: message.subject,
      textBody: message.text,
      htmlBody: message.html,
      status: 'pending',
      attempts: 0,
      nextAttemptAt: now,
      lockedUntil: null,
      lastError: null,
      createdAt: now,
      sentAt: null,
    });
  }
}
