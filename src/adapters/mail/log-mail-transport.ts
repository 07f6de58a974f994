import { Injectable, Logger } from '@nestjs/common';
import { assertHeaderSafe, MailMessage, MailTransport } from '../../application/ports/mail-transport';

/**
 * Development transport used when `SMTP_URL` is not set: writes the message, with its link, to
 * the log so the flow can be finished by hand. The first line names recipient,
 * subject and link; the plain-text body follows. The link is a live single-use token, which is
 * one reason production configures SMTP.
 */
@Injectable()
export class LogMailTransport implements MailTransport {
  private readonly logger = new Logger('Mail');

  constructor() {
    this.logger.warn('SMTP_URL is not set: emails are written to this log instead of being sent (development only)');
  }

  async send(message: MailMessage): Promise<void> {
    assertHeaderSafe(message);
    const links = message.text.match(/https?:\/\/\S+/g) ?? [];
    const summary = `Email to ${message.to} — "${message.subject}"${links.length ? ` — link: ${links.join(' ')}` : ''}`;
    this.logger.log(`${summary}\n\n${message.text}\n`);
  }
}
