import { Global, Module } from '@nestjs/common';
import { AccountEmails } from '../application/auth/account-emails';
import { EmailLinkTokens } from '../application/auth/email-link-tokens';
import { Mailer } from '../application/ports/mailer';
import { MailTransport } from '../application/ports/mail-transport';
import { LogMailTransport } from '../adapters/mail/log-mail-transport';
import { OutboxDispatcher } from '../adapters/mail/outbox-dispatcher';
import { OutboxMailer } from '../adapters/mail/outbox-mailer';
import { OutboxReadinessProbe } from '../adapters/mail/outbox-readiness-probe';
import { SmtpMailTransport } from '../adapters/mail/smtp-mail-transport';
import { AppConfig } from '../config/app-config';

/** Email: the account messages, queued to the outbox in the caller's transaction and sent by the dispatcher. */
@Global()
@Module({
  providers: [
    { provide: Mailer, useClass: OutboxMailer },
    {
      provide: MailTransport,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => (config.smtpUrl ? new SmtpMailTransport(config) : new LogMailTransport()),
    },
    OutboxDispatcher,
    OutboxReadinessProbe,
    AccountEmails,
    EmailLinkTokens,
  ],
  exports: [AccountEmails, EmailLinkTokens, OutboxReadinessProbe],
})
export class MailModule {}
