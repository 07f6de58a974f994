import { Writable } from 'node:stream';

/** Every log line the app writes, as written (a destination for LOG_DESTINATION). */
export class CapturedLogs extends Writable {
  readonly chunks: string[] = [];
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.chunks.push(chunk.toString('utf8'));
    done();
  }
  get text(): string {
    return this.chunks.join('');
  }
  /** The JSON lines; the only others are the plain lines with the codes and links of emails written to the log (no SMTP_URL). */
  lines(): Record<string, unknown>[] {
    return this.text
      .split('\n')
      .filter((line) => line && !this.isMailLine(line))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  private isMailLine(line: string): boolean {
    return /^(Email to \S+ — ".*":|    https?:\/\/\S+|    code: \d{8})$/.test(line);
  }
}

/** The secret and every `width`-character window of it (half-overlapping): a partial leak counts. */
export function fragments(secret: string, width = 12): string[] {
  const out = [secret];
  for (let i = 0; i + width <= secret.length; i += width / 2) out.push(secret.slice(i, i + width));
  return out;
}
