import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { configureApp } from './adapters/http/configure-app';
import { installGracefulShutdown } from './adapters/http/graceful-shutdown';
import { AppModule } from './app.module';
import { ConfigError, loadConfig } from './config/load-config';

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
  const app = await NestFactory.create(AppModule, { bodyParser: false, bufferLogs: true });
  configureApp(app);
  installGracefulShutdown(app, { timeoutMs: config.shutdownTimeoutSeconds * 1000 });
  await app.listen(config.port, config.host);
  console.log(
    `Identity service listening on http://${config.host}:${config.port} (${config.databaseUrl ? 'PostgreSQL' : 'embedded PGlite'})`,
  );
}

void bootstrap();
