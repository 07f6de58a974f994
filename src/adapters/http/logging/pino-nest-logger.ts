import { LoggerService } from '@nestjs/common';
import type { Level, Logger } from 'pino';

const STACK = /\n\s+at /;
/** Nest's start-up chatter (a line per module, controller and route): debug, not info. */
const START_UP_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer']);

/**
 * Nest's own messages (start-up, errors the framework catches) as pino lines of the root logger,
 * so they carry the request id and share the log's format and level.
 */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly root: Logger) {}

  log(message: unknown, ...params: unknown[]): void {
    const context = params.at(-1);
    this.write(typeof context === 'string' && START_UP_CONTEXTS.has(context) ? 'debug' : 'info', message, params);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }
  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  /**
   * Nest passes `(message, context)`, and for errors `(message, stack, context)`; an object message
   * becomes the line's fields, and a string after it the line's text (`logger.warn({...}, 'text')`).
   */
  private write(level: Level, message: unknown, params: unknown[]): void {
    if (!this.root.isLevelEnabled(level)) return;
    const rest = [...params];
    const last = rest.at(-1);
    const context = typeof last === 'string' && !STACK.test(last) ? (rest.pop() as string) : undefined;
    const stack = rest.find((param): param is string => typeof param === 'string' && STACK.test(param));
    const fields: Record<string, unknown> = { ...(context ? { context } : {}), ...(stack ? { stack } : {}) };
    if (message instanceof Error) this.root[level]({ ...fields, err: message }, message.message);
    else if (message !== null && typeof message === 'object') {
      const text = rest.find((param): param is string => typeof param === 'string' && param !== stack);
      this.root[level]({ ...fields, ...message }, text);
    } else this.root[level](fields, String(message));
  }
}
