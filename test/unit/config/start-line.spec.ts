import { loadConfig } from '../../../src/config/load-config';
import { describeDatabase, startLines } from '../../../src/config/start-line';

describe('the start line', () => {
  it('names the bound address, API_URL, PUBLIC_URL, the database and the CORS and WebAuthn origins of a production start', () => {
    const config = loadConfig({
      API_URL: 'https://id.example.com',
      PUBLIC_URL: 'https://app.example.com',
      DATABASE_URL: 'postgres://identity:s3cret-pass@db.internal:6432/identity?sslmode=require',
      CORS_ORIGINS: 'https://app.example.com',
      WEBAUTHN_RP_ID: 'example.com',
    });
    const text = startLines(config, 3000);
    expect(text.split('\n')).toEqual([
      'Identity service listening on http://0.0.0.0:3000',
      '  API_URL https://id.example.com (token issuer https://id.example.com)',
      '  PUBLIC_URL https://app.example.com (links in emails)',
      '  database: PostgreSQL db.internal:6432/identity',
      '  CORS origins: https://app.example.com',
      '  WebAuthn: RP ID example.com, origins https://app.example.com',
    ]);
    expect(text).not.toContain('s3cret-pass');
    expect(text).not.toContain('identity:');
  });

  it('names the embedded database by its folder, and the development profile’s any-port origins', () => {
    const config = loadConfig({ APP_PROFILE: 'development', PORT: '4000', DATA_DIR: '/var/lib/identity' });
    expect(describeDatabase(config)).toBe('embedded PGlite in /var/lib/identity');
    expect(startLines(config, 4000)).toContain('  CORS origins: http://localhost:*, http://127.0.0.1:*');
    expect(startLines(config, 4000)).toContain('  WebAuthn: RP ID localhost, origins http://localhost:4000, http://localhost:*');
  });

  it('keeps WebAuthn strict outside the development profile, and where the RP ID is not localhost', () => {
    expect(loadConfig({ PORT: '4000' }).webauthnOrigins).toEqual(['http://localhost:4000']);
    expect(
      loadConfig({ APP_PROFILE: 'development', WEBAUTHN_RP_ID: 'example.com', PUBLIC_URL: 'https://app.example.com' }).webauthnOrigins,
    ).toEqual(['https://app.example.com']);
    expect(loadConfig({ APP_PROFILE: 'development', WEBAUTHN_ORIGINS: 'http://localhost:5173' }).webauthnOrigins).toEqual([
      'http://localhost:5173',
    ]);
  });
});
