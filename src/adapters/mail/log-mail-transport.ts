import { Injectable, Logger } from '@nestjs/common';
import { assertHeaderSafe, MailMessage, MailTransport } from '../../application/ports/mail-transport';

/**
 * Development transport used when `SMTP_URL` is not set: writes the plain-text message, with
 * its link, to the log so the flow can be finished by hand (contract §6). The link is a live
 * single-use token, which is why production configures SMTP.
 */
@Injectable()
export class LogMailTransport implements MailTransport {
  private readonly logger = new Logger('Mail');

  constructor() {
    this.logger.warn('SMTP_URL is not set: emails are written to this log instead of being sent (development only)');
  }

  async send(message: MailMessage): Promise<void> {
    assertHeaderSafe(message);
    this.logger.log(`Email to ${message.to}\nSubject: ${message.subject}\n\n${message.text}\n`);
  }
}
