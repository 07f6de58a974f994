import { Injectable } from '@nestjs/common';
import { InjectThrottlerStorage, ThrottlerStorage } from '@nestjs/throttler';
import express from 'express';
import type { Request, Response } from 'express';
import { ClientMetadata, RegisterClientUseCase, RegistrationRefused } from '../../../application/clients/register-client.use-case';
import { AppConfig } from '../../../config/app-config';
import { Client } from '../../../domain/client/client';
import { DomainError } from '../../../domain/errors';
import { Realm } from '../../../domain/realm/realm';
import { renderError } from '../errors/render-error';
import { ipTracker, limitKey } from '../guards/rate-limit.guard';

const MAX_BODY = '64kb';

/**
 * A realm's registration endpoint (RFC 7591, `POST {issuer}/reg`), published in its discovery
 * document while its `clientRegistration` is not `closed`. Answers are RFC 7591's: 201 with the
 * client's metadata (and its secret, this once), or 400 `invalid_client_metadata` /
 * `invalid_redirect_uri`, 401 `invalid_token` for a missing or spent initial access token. Open
 * registration counts against RATE_LIMIT_OP_REGISTRATION per client IP.
 */
@Injectable()
export class OpRegistrationEndpoint {
  private readonly parseJson = express.json({ limit: MAX_BODY, type: () => true });

  constructor(
    private readonly register: RegisterClientUseCase,
    private readonly config: AppConfig,
    @InjectThrottlerStorage() private readonly limits: ThrottlerStorage,
  ) {}

  async handle(req: Request, res: Response, realm: Realm): Promise<void> {
    res.setHeader('Cache-Control', 'no-store');
    if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
      return oauthError(res, 400, 'invalid_client_metadata', 'The request body must be application/json');
    }
    if (realm.policy.clientRegistration === 'open') {
      const { limit, ttlSeconds } = this.config.rateLimits.opRegistration;
      const ttl = ttlSeconds * 1000;
      const record = await this.limits.increment(limitKey('opRegistration', ipTracker(req)), ttl, limit, ttl, 'opRegistration');
      res.setHeader('RateLimit-Limit', String(limit));
      res.setHeader('RateLimit-Remaining', String(record.isBlocked ? 0 : Math.max(0, limit - record.totalHits)));
      res.setHeader('RateLimit-Reset', String(Math.max(1, record.isBlocked ? record.timeToBlockExpire : record.timeToExpire)));
      if (record.isBlocked) {
        const rendered = renderError(new DomainError('RATE_LIMITED', 'Too many requests'));
        res.setHeader('Retry-After', String(Math.max(1, record.timeToBlockExpire)));
        res.status(rendered.status).json(rendered.body);
        return;
      }
    }
    let metadata: ClientMetadata;
    try {
      await new Promise<void>((resolve, reject) => this.parseJson(req, res, (error?: unknown) => (error ? reject(error) : resolve())));
      if (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body)) throw new Error('not an object');
      metadata = req.body as ClientMetadata;
    } catch {
      return oauthError(res, 400, 'invalid_client_metadata', 'The request body must be a JSON object');
    }
    const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? null;
    try {
      const { client, clientSecret } = await this.register.execute({ realm, metadata, initialAccessToken: bearer });
      res.status(201).json(registeredClient(client, clientSecret));
    } catch (error) {
      if (!(error instanceof RegistrationRefused)) throw error;
      if (error.error === 'registration_closed') return oauthError(res, 404, 'invalid_request', error.description);
      if (error.error === 'invalid_token') {
        res.setHeader('WWW-Authenticate', 'Bearer error="invalid_token"');
        return oauthError(res, 401, 'invalid_token', error.description);
      }
      return oauthError(res, 400, error.error, error.description);
    }
  }
}

function oauthError(res: Response, status: number, error: string, description: string): void {
  res.status(status).json({ error, error_description: description });
}

/** RFC 7591 §3.2.1: the client's metadata as registered. */
function registeredClient(client: Client, clientSecret: string | null): Record<string, unknown> {
  const view = client.snapshot();
  return {
    client_id: view.clientId,
    ...(clientSecret ? { client_secret: clientSecret, client_secret_expires_at: 0 } : {}),
    client_id_issued_at: Math.floor(view.createdAt.getTime() / 1000),
    client_name: view.name,
    redirect_uris: view.redirectUris,
    post_logout_redirect_uris: view.postLogoutRedirectUris,
    grant_types: view.grantTypes,
    response_types: view.grantTypes.includes('authorization_code') ? ['code'] : [],
    token_endpoint_auth_method: view.tokenEndpointAuthMethod,
    scope: view.scopes.join(' '),
    id_token_signed_response_alg: view.idTokenSignedResponseAlg,
    ...(view.jwksUri ? { jwks_uri: view.jwksUri } : {}),
    ...(view.backchannelLogoutUri ? { backchannel_logout_uri: view.backchannelLogoutUri, backchannel_logout_session_required: true } : {}),
  };
}
