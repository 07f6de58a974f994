import { Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { pino, DestinationStream, Logger } from 'pino';
import type { RequestHandler } from 'express';
import { AppConfig } from '../../../config/app-config';
import { createAccessLog, createRootLogger } from './http-logger';

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
];

/** The logger itself, shared by nestjs-pino and configureApp. */
@Module({ providers, exports: [LOG_DESTINATION, ROOT_LOGGER, HTTP_LOGGER] })
export class LogOutputModule {}

/**
 * Structured JSON logs (nestjs-pino). The access-log middleware (createAccessLog) is mounted in
 * configureApp right after the request id so that every request is logged — also those answered
 * before routing (413, 415); it scopes the request id, which every line written while handling
 * the request carries (nestjs-pino reuses the request's logger: `useExisting`).
 */
@Module({
  imports: [
    LogOutputModule,
    LoggerModule.forRootAsync({
      imports: [LogOutputModule],
      inject: [ROOT_LOGGER],
      useFactory: (root: Logger) => ({ pinoHttp: { logger: root }, useExisting: true as const }),
    }),
  ],
  exports: [LogOutputModule, LoggerModule],
})
export class LoggingModule {}
