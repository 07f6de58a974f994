import { Module } from '@nestjs/common';
import { pino, DestinationStream, Logger } from 'pino';
import type { RequestHandler } from 'express';
import { AppConfig } from '../../../config/app-config';
import { createAccessLog, createRootLogger } from './http-logger';
import { PinoNestLogger } from './pino-nest-logger';

/** Where log lines go: stdout in production; tests substitute a stream they read. */
export const LOG_DESTINATION = Symbol('LOG_DESTINATION');
/** The process's root pino logger. */
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');
/** The access-log middleware, mounted by configureApp ahead of body parsing. */
export const HTTP_LOGGER = Symbol('HTTP_LOGGER');

const providers = [
  { provide: LOG_DESTINATION, useFactory: (): DestinationStream => pino.destination({ dest: 1, sync: true }) },
  {
    provide: ROOT_LOGGER,
    inject: [AppConfig, LOG_DESTINATION],
    useFactory: (config: AppConfig, destination: DestinationStream): Logger => createRootLogger(config, destination),
  },
  { provide: HTTP_LOGGER, inject: [ROOT_LOGGER], useFactory: (root: Logger): RequestHandler => createAccessLog(root) },
  { provide: PinoNestLogger, inject: [ROOT_LOGGER], useFactory: (root: Logger) => new PinoNestLogger(root) },
];

/**
 * Structured JSON logs (pino). The access-log middleware (createAccessLog) is mounted in
 * configureApp right after the request id so that every request is logged — also those answered
 * before routing (413, 415); it scopes the request id, which every line written while handling
 * the request carries. Nest's own messages go through PinoNestLogger to the same logger.
 */
@Module({ providers, exports: [LOG_DESTINATION, ROOT_LOGGER, HTTP_LOGGER, PinoNestLogger] })
export class LoggingModule {}
