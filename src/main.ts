import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { NestFactory } from '@nestjs/core';
import { configureApp } from './adapters/http/configure-app';
import { installGracefulShutdown } from './adapters/http/graceful-shutdown';
import { JsonReplyExpressAdapter } from './adapters/http/json-reply-adapter';
import { AppModule } from './app.module';
import { AppConfig } from './config/app-config';
import { ConfigError, loadConfig } from './config/load-config';
import { startLines } from './config/start-line';

async function bootstrap(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  if (config.profile === 'development') announceDevelopmentProfile(config);
  const app = await NestFactory.create(AppModule, new JsonReplyExpressAdapter(), { bodyParser: false, bufferLogs: true });
  configureApp(app);
  installGracefulShutdown(app, { timeoutMs: config.shutdownTimeoutSeconds * 1000 });
  await app.listen(config.port, config.host);
  // The bound port: with PORT=0 the system picks one, and the first line is how a caller learns it.
  console.log(startLines(config, (app.getHttpServer().address() as AddressInfo).port));
}

/** The development profile says so at start, with what it changed, so it is never mistaken for production. */
function announceDevelopmentProfile(config: AppConfig): void {
  const limits = Object.entries(config.rateLimits).map(([name, { limit, ttlSeconds }]) => `${name} ${limit}/${ttlSeconds}s`);
  console.log(
    [
      'DEVELOPMENT PROFILE (APP_PROFILE=development) — not for production:',
      `  rate limits relaxed: ${limits.join(', ')}`,
      `  CORS open to: ${config.corsOrigins.join(', ') || 'nobody'}`,
      `  WebAuthn (passkeys, security keys) accepted from: ${config.webauthnOrigins.join(', ')}`,
      `  emails: ${config.smtpUrl ? 'sent through SMTP_URL' : 'written to the log'}`,
      `  email links: ${config.publicUrl}; token issuer: ${config.issuer}`,
      "  return URLs (email links, identity providers): any http://localhost:<port> or http://127.0.0.1:<port> page, besides each realm's list",
    ].join('\n'),
  );
}

void bootstrap();
