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

  it("writes Nest's start-up chatter (modules, controllers, one line per route) at debug, so an info log starts short", () => {
    const info = capture();
    const debug = capture('debug');
    for (const { logger } of [info, debug]) {
      logger.log('AppModule dependencies initialized', 'InstanceLoader');
      logger.log('AuthController {/api/v1/auth}:', 'RoutesResolver');
      logger.log('Mapped {/api/v1/auth/login, POST} route', 'RouterExplorer');
      logger.log('Nest application successfully started', 'NestApplication');
    }
    expect(info.lines().map((line) => line.msg)).toEqual(['Nest application successfully started']);
    expect(debug.lines().map((line) => [line.level, line.context])).toEqual([
      [20, 'InstanceLoader'],
      [20, 'RoutesResolver'],
      [20, 'RouterExplorer'],
      [30, 'NestApplication'],
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
