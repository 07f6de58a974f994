import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { MailTransport, UndeliverableMessageError } from '../../../src/application/ports/mail-transport';
import { LogMailTransport } from '../../../src/adapters/mail/log-mail-transport';
import { EmailTemplates } from '../../../src/application/mail/email-templates';
import { OutboxDispatcher } from '../../../src/adapters/mail/outbox-dispatcher';
import { SmtpMailTransport } from '../../../src/adapters/mail/smtp-mail-transport';
import { loadConfig } from '../../../src/config/load-config';
import { FixedClock } from '../../fakes/simple-fakes';

const message = {
  id: '0190f5b2-0000-7000-8000-000000000001',
  to: 'ada@example.com',
  subject: 'Verify your email address — Default',
  text: 'Open the link below.\n\nhttp://localhost:3000/verify-email?token=abc_DEF-123\n\n— Default',
  html: '<p>Open the link</p>',
};

describe('LogMailTransport', () => {
  afterEach(() => jest.restoreAllMocks());

  it('logs recipient, subject and the link on one line, then the plain text', async () => {
    const logged: string[] = [];
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'log').mockImplementation((msg: unknown) => void logged.push(String(msg)));
    await new LogMailTransport().send(message);
    expect(logged).toHaveLength(1);
    const [first] = logged[0].split('\n');
    expect(first).toBe(
      'Email to ada@example.com — "Verify your email address — Default" — link: http://localhost:3000/verify-email?token=abc_DEF-123',
    );
    expect(logged[0]).toContain(message.text);
  });

  it('also writes each link as plain text on a line of its own, under a line naming the recipient', async () => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    const written: string[] = [];
    const transport = new LogMailTransport({ write: (text: string) => written.push(text) });
    await transport.send(message);
    expect(written.join('').split('\n')).toEqual([
      'Email to ada@example.com — "Verify your email address — Default":',
      '    http://localhost:3000/verify-email?token=abc_DEF-123',
      '',
    ]);
    await transport.send({ ...message, text: 'Your password was changed.' });
    expect(written).toHaveLength(1);
  });

  it('writes a sign-in code as 8 digits on a plain line of its own, with or without a link, and in the summary', async () => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const logged: string[] = [];
    jest.spyOn(Logger.prototype, 'log').mockImplementation((msg: unknown) => void logged.push(String(msg)));
    const written: string[] = [];
    const transport = new LogMailTransport({ write: (text: string) => written.push(text) });
    const input = { realmId: 'default', realmName: 'Default', to: 'bob@example.com', code: '29716025', minutes: 10 };
    // Without returnTo: a code and no link.
    const codeOnly = EmailTemplates.signInCode({ ...input, link: null });
    expect(codeOnly.text).toContain('Your sign-in code is 2971 6025.');
    await transport.send({ id: message.id, ...codeOnly });
    expect(written.join('').split('\n')).toEqual(['Email to bob@example.com — "Your sign-in code — Default":', '    code: 29716025', '']);
    expect(logged[0].split('\n')[0]).toBe('Email to bob@example.com — "Your sign-in code — Default" — code: 29716025');
    // With returnTo: the code, then the link.
    written.length = 0;
    const link = 'http://localhost:5173/signed-in?email_token=tok_EN-1';
    await transport.send({ id: message.id, ...EmailTemplates.signInCode({ ...input, link }) });
    expect(written.join('').split('\n')).toEqual([
      'Email to bob@example.com — "Your sign-in code — Default":',
      '    code: 29716025',
      `    ${link}`,
      '',
    ]);
    expect(logged[1].split('\n')[0]).toBe(`Email to bob@example.com — "Your sign-in code — Default" — code: 29716025 — link: ${link}`);
  });

  it.each([
    ['recipient', { to: 'ada@example.com\r\nBcc: eve@example.com' }],
    ['subject', { subject: 'Hi\nBcc: eve@example.com' }],
  ])('refuses a line break in the %s as undeliverable', async (_field, change) => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    await expect(new LogMailTransport().send({ ...message, ...change })).rejects.toBeInstanceOf(UndeliverableMessageError);
    expect(log).not.toHaveBeenCalled();
  });
});

describe('SmtpMailTransport', () => {
  it('refuses a line break in a header before it opens any connection', async () => {
    // Port 9 (discard) on loopback: nothing listens, so reaching the network would be a connection error.
    const transport = new SmtpMailTransport(loadConfig({ SMTP_URL: 'smtp://127.0.0.1:9' }));
    try {
      await expect(transport.send({ ...message, to: 'ada@example.com\r\nBcc: eve@example.com' })).rejects.toBeInstanceOf(
        UndeliverableMessageError,
      );
    } finally {
      transport.onApplicationShutdown();
    }
  });
});

describe('OutboxDispatcher backoff', () => {
  const config = loadConfig({ OUTBOX_RETRY_BASE_SECONDS: '30', OUTBOX_RETRY_MAX_SECONDS: '3600' });
  const dispatcher = new OutboxDispatcher({} as DataSource, {} as MailTransport, new FixedClock(), config);

  it('doubles from the base, never exceeds the nominal delay nor the cap, and jitters at most 20 % below', () => {
    const nominal = [30, 60, 120, 240, 480, 960, 1920, 3600, 3600, 3600];
    for (let attempt = 1; attempt <= nominal.length; attempt += 1) {
      for (let i = 0; i < 50; i += 1) {
        const delay = dispatcher.backoffSeconds(attempt);
        expect(delay).toBeLessThanOrEqual(nominal[attempt - 1]);
        expect(delay).toBeGreaterThanOrEqual(Math.floor(nominal[attempt - 1] * 0.8));
      }
    }
    expect(dispatcher.backoffSeconds(500)).toBeLessThanOrEqual(3600);
  });
});
