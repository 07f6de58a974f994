/** One message as a transport delivers it: a single recipient, plain text and HTML. */
export interface MailMessage {
  /** Outbox id, for log lines and the Message-ID; never shown to the recipient as data. */
  id: string;
  to: string;
  subject: string;
  text: string;
  html: string;
}

/**
 * A message the transport will never deliver, however often it is retried (e.g. a line break
 * in a header). The dispatcher marks it failed at once instead of retrying.
 */
export class UndeliverableMessageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UndeliverableMessageError';
  }
}

/** Hands a message to the outside world (SMTP, or the log in development). */
export abstract class MailTransport {
  /**
   * Resolves once the message is accepted for delivery.
   * @throws UndeliverableMessageError for a message that can never be sent; any other error is retried
   */
  abstract send(message: MailMessage): Promise<void>;
}

/** Refuses CR and LF in anything that becomes a header line (SMTP header injection, ASVS 5.2.3). */
export function assertHeaderSafe(message: Pick<MailMessage, 'to' | 'subject'>): void {
  for (const [field, value] of [
    ['recipient', message.to],
    ['subject', message.subject],
  ] as const) {
    if (/[\r\n\0]/.test(value)) throw new UndeliverableMessageError(`the ${field} contains a line break`);
  }
}
