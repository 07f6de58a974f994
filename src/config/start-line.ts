import { resolve } from 'node:path';
import { AppConfig } from './app-config';

/** The database as the start line names it: PGlite's folder, or PostgreSQL's host, port and database (never the credentials). */
export function describeDatabase(config: Pick<AppConfig, 'databaseUrl' | 'dataDir'>): string {
  if (!config.databaseUrl) {
    return config.dataDir === 'memory' ? 'embedded PGlite in memory' : `embedded PGlite in ${resolve(config.dataDir)}`;
  }
  const url = new URL(config.databaseUrl);
  const database = decodeURIComponent(url.pathname.replace(/^\//, '')) || '(the user’s default database)';
  return `PostgreSQL ${url.hostname}:${url.port || '5432'}/${database}`;
}

/**
 * What the service prints once it listens: the bound address (with PORT=0, how a caller learns the
 * port), then the addresses it answers as, the database, and which browser origins it accepts.
 */
export function startLines(config: AppConfig, boundPort: number): string {
  return [
    `Identity service listening on http://${config.host}:${boundPort}`,
    `  API_URL ${config.apiUrl} (token issuer ${config.issuer})`,
    `  PUBLIC_URL ${config.publicUrl} (links in emails)`,
    `  database: ${describeDatabase(config)}`,
    `  CORS origins: ${config.corsOrigins.join(', ') || 'none'}`,
    `  WebAuthn: RP ID ${config.webauthnRpId}, origins ${config.webauthnOrigins.join(', ')}`,
  ].join('\n');
}
