import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { createTransport, Transporter } from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool';
import { assertHeaderSafe, MailMessage, MailTransport } from '../../application/ports/mail-transport';
import { AppConfig } from '../../config/app-config';

/** Parallel SMTP connections of one instance; the dispatcher sends with the same concurrency. */
export const SMTP_MAX_CONNECTIONS = 4;

/**
 * Delivers through an SMTP server (`SMTP_URL`, `MAIL_FROM`) with nodemailer's pooled transport.
 * Timeouts are short, so a hanging server costs one attempt, well within the dispatcher's lease.
 */
@Injectable()
export class SmtpMailTransport implements MailTransport, OnApplicationShutdown {
  private readonly transporter: Transporter;
  private readonly messageIdDomain: string;

  constructor(config: AppConfig) {
    if (!config.smtpUrl) throw new Error('SmtpMailTransport needs SMTP_URL');
    const options = {
      url: config.smtpUrl,
      pool: true,
      maxConnections: SMTP_MAX_CONNECTIONS,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
      // Messages are plain strings: nothing may make nodemailer read a file or fetch a URL.
      disableFileAccess: true,
      disableUrlAccess: true,
    } as SMTPPool.Options;
    this.transporter = createTransport(options, { from: config.mailFrom });
    this.messageIdDomain = /@([A-Za-z0-9.-]+)/.exec(config.mailFrom)?.[1] ?? 'localhost';
  }

  async send(message: MailMessage): Promise<void> {
    assertHeaderSafe(message);
    await this.transporter.sendMail({
      to: message.to,
      subject: message.subject,
      text: message.text,
      html: message.html,
      // Stable per outbox row: a rare second delivery (crash after send) carries the same id.
      messageId: `<${message.id}@${this.messageIdDomain}>`,
      disableFileAccess: true,
      disableUrlAccess: true,
    });
  }

  onApplicationShutdown(): void {
    this.transporter.close();
  }
}
