import { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** A message as the SMTP server received it, decoded enough for tests to read. */
export interface ReceivedMail {
  envelopeFrom: string;
  envelopeTo: string[];
  headers: Record<string, string>;
  subject: string;
  messageId: string;
  text: string;
  html: string;
  raw: string;
}

function decodeQuotedPrintable(body: string): string {
  const bytes = body.replace(/=\r?\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

function decodeBody(body: string, encoding: string | undefined): string {
  switch ((encoding ?? '7bit').toLowerCase()) {
    case 'quoted-printable':
      return decodeQuotedPrintable(body);
    case 'base64':
      return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
    default:
      return body;
  }
}

/** RFC 2047 encoded words (`=?UTF-8?Q?…?=`, `=?UTF-8?B?…?=`). */
function decodeWords(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g, (_, _charset: string, kind: string, text: string) =>
      kind.toUpperCase() === 'B' ? Buffer.from(text, 'base64').toString('utf8') : decodeQuotedPrintable(text.replace(/_/g, ' ')),
    );
}

function splitHeaders(raw: string): { headers: Record<string, string>; body: string } {
  const end = raw.search(/\r?\n\r?\n/);
  const head = end < 0 ? raw : raw.slice(0, end);
  const body = end < 0 ? '' : raw.slice(end).replace(/^\r?\n\r?\n/, '');
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { headers, body };
}

/** The text/plain and text/html parts of a (possibly multipart) message. */
function parts(headers: Record<string, string>, body: string): { text: string; html: string } {
  const type = headers['content-type'] ?? 'text/plain';
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (/^multipart\//i.test(type) && boundary) {
    const found = { text: '', html: '' };
    for (const chunk of body.split(`--${boundary}`).slice(1)) {
      if (chunk.startsWith('--')) break;
      const part = splitHeaders(chunk.replace(/^\r?\n/, ''));
      const inner = parts(part.headers, part.body.replace(/\r?\n$/, ''));
      found.text ||= inner.text;
      found.html ||= inner.html;
    }
    return found;
  }
  const decoded = decodeBody(body, headers['content-transfer-encoding']);
  return /^text\/html/i.test(type) ? { text: '', html: decoded } : { text: decoded, html: '' };
}

export function parseMail(raw: string, envelopeFrom = '', envelopeTo: string[] = []): ReceivedMail {
  const { headers, body } = splitHeaders(raw);
  return {
    envelopeFrom,
    envelopeTo,
    headers,
    subject: decodeWords(headers.subject ?? ''),
    messageId: headers['message-id'] ?? '',
    ...parts(headers, body),
    raw,
  };
}

/**
 * A real SMTP server on an ephemeral port of 127.0.0.1 (the npm package smtp-server) that keeps
 * what it receives. It can be stopped and started again on the same port to play an outage.
 */
export class SmtpSink {
  readonly messages: ReceivedMail[] = [];
  private server: SMTPServer | null = null;
  private waiters: (() => void)[] = [];

  private constructor(public port: number) {}

  static async start(): Promise<SmtpSink> {
    const sink = new SmtpSink(0);
    await sink.listen();
    return sink;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.server !== null;
  }

  /** Messages whose envelope recipient is `address` (and whose subject starts with `subject`, when given). */
  to(address: string, subject?: string): ReceivedMail[] {
    return this.messages.filter(
      (m) => m.envelopeTo.includes(address.toLowerCase()) && (subject === undefined || m.subject.startsWith(subject)),
    );
  }

  /** Resolves with the messages to `address` (whose subject starts with `subject`, when given) once there are at least `count` of them. */
  async waitFor(address: string, count = 1, timeoutMs = 10_000, subject?: string): Promise<ReceivedMail[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.to(address, subject).length < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`expected ${count} message(s) to ${address}, got ${this.to(address, subject).length}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 200));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.to(address, subject);
  }

  /** Closes the port and drops open connections at once: the server is down. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Listens again on the same port. */
  async restart(): Promise<void> {
    if (!this.server) await this.listen();
  }

  private async listen(): Promise<void> {
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      closeTimeout: 50,
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
          this.messages.push(
            parseMail(
              raw,
              from,
              session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
            ),
          );
          for (const wake of this.waiters.splice(0)) wake();
          callback();
        });
      },
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.server.address() as AddressInfo).port;
    this.server = server;
  }
}

/** The token of the first link to `path` (e.g. `/verify-email`) in a message's plain text. */
export function linkToken(mail: ReceivedMail, path: string): string {
  const escaped = path.replace(/[/.]/g, '\\$&');
  const match = new RegExp(`https?://[^\\s]+${escaped}\\?token=([A-Za-z0-9_-]+)`).exec(mail.text);
  if (!match) throw new Error(`no ${path} link in: ${mail.text}`);
  return match[1];
}
