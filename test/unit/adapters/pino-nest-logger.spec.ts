import { Writable } from 'node:stream';
import { pino } from 'pino';
import { PinoNestLogger } from '../../../src/adapters/http/logging/pino-nest-logger';

function capture(level = 'info'): { logger: PinoNestLogger; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  const logger = new PinoNestLogger(pino({ level }, stream));
  return {
    logger,
    lines: () =>
      chunks
        .join('')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line)),
  };
}

describe('PinoNestLogger', () => {
  it("writes Nest's (message, context) as a line with the context", () => {
    const { logger, lines } = capture();
    logger.log('Nest application successfully started', 'NestApplication');
    expect(lines()).toEqual([
      expect.objectContaining({ level: 30, msg: 'Nest application successfully started', context: 'NestApplication' }),
    ]);
  });

  it('keeps the stack of an error apart from its context', () => {
    const { logger, lines } = capture();
    const stack = 'Error: boom\n    at somewhere (file.ts:1:1)';
    logger.error('boom', stack, 'ExceptionsHandler');
    expect(lines()).toEqual([expect.objectContaining({ level: 50, msg: 'boom', stack, context: 'ExceptionsHandler' })]);
  });

  it('spreads an object message into fields and takes the following string as the text', () => {
    const { logger, lines } = capture();
    logger.warn({ event: 'login.failed', outcome: 'failure' }, 'security event', 'Audit');
    expect(lines()).toEqual([
      expect.objectContaining({ level: 40, msg: 'security event', event: 'login.failed', outcome: 'failure', context: 'Audit' }),
    ]);
  });

  it('writes nothing below the configured level', () => {
    const { logger, lines } = capture('warn');
    logger.log('hidden', 'Ctx');
    logger.debug('hidden', 'Ctx');
    expect(lines()).toEqual([]);
  });
});
