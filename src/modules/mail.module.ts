import { Global, Module } from '@nestjs/common';
import { AccountEmails } from '../application/account/account-emails';
import { EmailLinkTokens } from '../application/account/email-link-tokens';
import { Mailer } from '../application/ports/mailer';
import { MailTransport } from '../application/ports/mail-transport';
import { LogMailTransport } from '../adapters/mail/log-mail-transport';
import { OutboxDispatcher } from '../adapters/mail/outbox-dispatcher';
import { OutboxMailer } from '../adapters/mail/outbox-mailer';
import { OutboxReadinessProbe } from '../adapters/mail/outbox-readiness-probe';
import { AppConfig } from '../config/app-config';
import { LOG_DESTINATION, LoggingModule } from '../adapters/http/logging/logging.module';
import type { DestinationStream } from 'pino';

/** Email: the account messages, queued to the outbox in the caller's transaction and sent by the dispatcher. */
@Global()
@Module({
  imports: [LoggingModule],
  providers: [
    { provide: Mailer, useClass: OutboxMailer },
    {
      provide: MailTransport,
      inject: [AppConfig, LOG_DESTINATION],
      // nodemailer (~2 MB of heap) is loaded only by instances that send through SMTP.
      useFactory: (config: AppConfig, log: DestinationStream): MailTransport => {
        if (!config.smtpUrl) return new LogMailTransport(log);
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const smtp = require('../adapters/mail/smtp-mail-transport') as typeof import('../adapters/mail/smtp-mail-transport');
        return new smtp.SmtpMailTransport(config);
      },
    },
    OutboxDispatcher,
    OutboxReadinessProbe,
    AccountEmails,
    EmailLinkTokens,
  ],
  exports: [AccountEmails, EmailLinkTokens, OutboxReadinessProbe],
})
export class MailModule {}
