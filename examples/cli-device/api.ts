/**
 * The API the command-line example calls: `GET /me` for a token of its resource holding
 * `profile:read`, protected by the verifier's `protectedResource`.
 */
import type { Server } from 'node:http';
import express from 'express';
import { protectedResource, type VerifiedAccessToken } from '../../verifier/src/index.js';

export function createApi(options: { issuer: string; resource: string }): express.Express {
  const api = protectedResource({ issuer: options.issuer, resource: options.resource, scopes: ['profile:read'] });
  const app = express();
  app.use(api.metadata);
  app.get('/me', api.protect(), (req, res) => {
    const token = (req as { accessToken?: VerifiedAccessToken }).accessToken as VerifiedAccessToken;
    res.json({ user: token.sub, client: token.clientId, scopes: token.scopes });
  });
  return app;
}

/** Starts the API from the environment: ISSUER, RESOURCE (default http://127.0.0.1:8788). */
export async function serve(env: NodeJS.ProcessEnv = process.env): Promise<Server> {
  const issuer = env.ISSUER ?? 'http://localhost:3000/realms/default';
  const resource = env.RESOURCE ?? 'http://127.0.0.1:8788';
  const url = new URL(resource);
  return new Promise((resolve) => {
    const server = createApi({ issuer, resource }).listen(Number(url.port || 80), url.hostname, () => {
      console.warn(`API at ${url.origin}/me`);
      resolve(server);
    });
  });
}
