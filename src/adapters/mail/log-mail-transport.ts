import { Injectable, Logger } from '@nestjs/common';
import { assertHeaderSafe, MailMessage, MailTransport } from '../../application/ports/mail-transport';

/** Where the plain lines go: the log's own destination (stdout, or what a test reads). */
export interface PlainLineSink {
  write(text: string): unknown;
}

/**
 * Development transport used when `SMTP_URL` is not set: writes the message, with its link, to
 * the log so the flow can be finished by hand. The log line names recipient, subject and link;
 * the plain-text body follows in it. Because a JSON log line escapes its text, every link is
 * also written as plain text on a line of its own, under a line naming the recipient, so a
 * terminal shows it as a link to click. The link is a live single-use token, which is one reason
 * production configures SMTP.
 */
@Injectable()
export class LogMailTransport implements MailTransport {
  private readonly logger = new Logger('Mail');

  constructor(private readonly plain: PlainLineSink | null = null) {
    this.logger.warn('SMTP_URL is not set: emails are written to this log instead of being sent (development only)');
  }

  async send(message: MailMessage): Promise<void> {
    assertHeaderSafe(message);
    const links = message.text.match(/https?:\/\/\S+/g) ?? [];
    const summary = `Email to ${message.to} — "${message.subject}"${links.length ? ` — link: ${links.join(' ')}` : ''}`;
    this.logger.log(`${summary}\n\n${message.text}\n`);
    if (this.plain && links.length > 0) {
      this.plain.write(`Email to ${message.to} — "${message.subject}":\n${links.map((link) => `    ${link}\n`).join('')}`);
    }
  }
}
