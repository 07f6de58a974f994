import { Injectable, Logger } from '@nestjs/common';
import { assertHeaderSafe, MailMessage, MailTransport } from '../../application/ports/mail-transport';

/** Where the plain lines go: the log's own destination (stdout, or what a test reads). */
export interface PlainLineSink {
  write(text: string): unknown;
}

/**
 * The sign-in code of a message, as its text shows it ("Your sign-in code is 2971 6025"): the
 * 8 digits without the space that makes them easier to read in the email.
 */
export function signInCodeOf(text: string): string | null {
  const match = /\bsign-in code is (\d{4}) ?(\d{4})\b/.exec(text);
  return match ? match[1] + match[2] : null;
}

/**
 * Development transport used when `SMTP_URL` is not set: writes the message, with its code or
 * link, to the log so the flow can be finished by hand. The log line names recipient, subject,
 * code and link; the plain-text body follows in it. Because a JSON log line escapes its text,
 * every code (as 8 digits) and every link is also written as plain text on a line of its own,
 * under a line naming the recipient, so a terminal shows the link as a link to click and `grep`
 * finds the code. The code and the link are live single-use credentials, which is one reason
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
    const code = signInCodeOf(message.text);
    const summary = [
      `Email to ${message.to} — "${message.subject}"`,
      ...(code ? [`code: ${code}`] : []),
      ...(links.length ? [`link: ${links.join(' ')}`] : []),
    ].join(' — ');
    this.logger.log(`${summary}\n\n${message.text}\n`);
    const lines = [...(code ? [`code: ${code}`] : []), ...links];
    if (this.plain && lines.length > 0) {
      this.plain.write(`Email to ${message.to} — "${message.subject}":\n${lines.map((line) => `    ${line}\n`).join('')}`);
    }
  }
}
