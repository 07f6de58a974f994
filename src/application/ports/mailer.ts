export interface OutgoingEmail {
  realmId: string;
  to: string;
  subject: string;
  text: string;
  html: string;
}

/**
 * Queues email. Messages are written to the outbox inside the caller's transaction and delivered
 * later by the dispatcher, so a crash or an SMTP outage loses nothing.
 */
export abstract class Mailer {
  abstract enqueue(message: OutgoingEmail): Promise<void>;
}
