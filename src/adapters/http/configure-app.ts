import { INestApplication } from '@nestjs/common';
import { NestExpressApplication } from '@nestjs/platform-express';
import type { RequestHandler } from 'express';
import { AppConfig } from '../../config/app-config';
import { answerClientErrors } from './client-errors';
import { PrometheusMetrics } from '../metrics/prometheus-metrics';
import { HTTP_LOGGER } from './logging/logging.module';
import { PinoNestLogger } from './logging/pino-nest-logger';
import { httpMetrics } from './metrics.middleware';
import { corsPolicy, endDeclinedPreflights, securityHeaders, varyOnOrigin } from './security-headers';
import { inSequence, jsonBody, noStore, requestId, under } from './middleware';
import { OpenIdProviderMount } from './openid-provider/op-mount';
import { setupOpenApi } from './openapi/openapi';
import { AppValidationPipe } from './validation.pipe';

/** Everything main.ts and the e2e tests share: middleware order, pipes, proxy trust. */
export function configureApp(app: INestApplication): void {
  const config = app.get(AppConfig);
  const express = app as NestExpressApplication;
  express.set('trust proxy', config.trustProxy);
  express.disable('x-powered-by');
  // API answers are never cached (no-store), so a validator for conditional requests is useless,
  // and Express would hash every body (SHA-1 of up to 64 KiB) to make one.
  express.set('etag', false);
  answerClientErrors(app.getHttpServer());
  app.useLogger(app.get(PinoNestLogger));
  // Every request runs these, in this order; each group is one Express layer (see inSequence).
  express.use(
    inSequence(
      requestId,
      app.get<RequestHandler>(HTTP_LOGGER),
      httpMetrics(app.get(PrometheusMetrics)),
      securityHeaders(),
      ...(config.corsOrigins.length > 0 ? [varyOnOrigin] : []),
    ),
  );
  app.enableCors(corsPolicy(config.corsOrigins));
  // The realms' OpenID providers take their own bodies (forms): they answer before the JSON parser.
  // They answer their own preflights too: an app's userinfo call from its redirect URI's origin
  // needs one (the provider checks that origin against the client on the request itself).
  express.use(inSequence(app.get(OpenIdProviderMount).handler(), endDeclinedPreflights, under(['/api', '/v1'], noStore), jsonBody));
  app.useGlobalPipes(new AppValidationPipe());
  setupOpenApi(app);
}
