import { INestApplication } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { DomainErrorCode } from '../../../domain/errors';
import { IS_ADMIN, IS_PUBLIC, REALM_MODE } from '../decorators';
import { ERROR_STATUS } from '../errors/error-status';
import { API_ERRORS } from './api-errors.decorator';
import { RESPONSE_SCHEMAS } from './schemas';

type Operation = NonNullable<OpenAPIObject['paths'][string]['get']>;
type Parameter = { name: string; in: string; required?: boolean; description?: string; schema?: object };
type Handler = { controller: object; handler: object };

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
const WITH_BODY = new Set(['put', 'post', 'delete', 'patch']);
const ENVELOPE = { $ref: '#/components/schemas/ErrorEnvelope' };
const RETRY_AFTER = { description: 'Seconds to wait before retrying', schema: { type: 'integer', example: 60 } };
const REQUEST_ID = {
  description: 'The request id (echoed when the client sent a safe one); the same id is in the logs',
  schema: { type: 'string' },
};

/** A plausible message per code, for the examples of the error responses. */
const EXAMPLE_MESSAGE: Record<DomainErrorCode, string> = {
  VALIDATION_FAILED: 'email must be an email',
  INVALID_VERIFICATION_TOKEN: 'This link is invalid or has expired',
  INVALID_CREDENTIALS: 'Invalid email or password',
  TOKEN_EXPIRED: 'The access token has expired',
  INVALID_TOKEN: 'The access token is invalid',
  MFA_REQUIRED: 'This session must be confirmed with a second factor',
  REAUTHENTICATION_REQUIRED: 'This session has ended; sign in again',
  INVALID_MFA_CODE: 'The code is not valid',
  INVALID_DPOP_PROOF: 'The DPoP proof is missing or invalid',
  FORBIDDEN: 'This action requires the realm-admin role',
  ACCOUNT_SUSPENDED: 'This account is suspended',
  REGISTRATION_DISABLED: 'Registration is closed in this realm: ask an administrator for an account',
  EMAIL_NOT_VERIFIED: 'Verify your email address before signing in: use the link in the email we sent',
  REALM_DISABLED: 'This realm is disabled',
  SSO_REQUIRED: 'Addresses of this organization sign in through its identity provider',
  NOT_FOUND: 'Route not found',
  REALM_NOT_FOUND: 'Realm "acme" does not exist',
  USER_NOT_FOUND: 'User not found',
  SESSION_NOT_FOUND: 'Session not found',
  WEBHOOK_NOT_FOUND: 'Webhook not found',
  ROLE_NOT_FOUND: 'Role not found',
  CLIENT_NOT_FOUND: 'Client not found',
  EMAIL_ALREADY_REGISTERED: 'This email address is already registered',
  INVALID_USER_STATE: 'The user is active; only a suspended user can be activated',
  ROLE_EXISTS: 'The realm already has a role with this name',
  IDENTITY_PROVIDER_NOT_FOUND: 'Identity provider not found',
  IDENTITY_PROVIDER_EXISTS: 'The realm has an identity provider named corp',
  RESOURCE_NOT_FOUND: 'Resource not found',
  RESOURCE_EXISTS: 'The realm has a resource https://api.example.com',
  ORGANIZATION_NOT_FOUND: 'Organization not found',
  ORGANIZATION_EXISTS: 'The realm has an organization with the slug "acme" or one of these domains',
  PAYLOAD_TOO_LARGE: 'The request body exceeds 64 KiB',
  UNSUPPORTED_MEDIA_TYPE: 'Request bodies must be application/json',
  ACCOUNT_LOCKED: 'This account is temporarily locked after too many failed logins',
  RATE_LIMITED: 'Too many requests; retry later',
  INTERNAL_ERROR: 'An unexpected error occurred',
  SERVICE_UNAVAILABLE: 'The service is temporarily unavailable',
  HOOK_DENIED: 'Sign-ups from this domain need an invitation',
  HOOK_FAILED: 'The realm’s hook did not answer; try again',
};

function example(code: DomainErrorCode): object {
  const error: Record<string, unknown> = { code, message: EXAMPLE_MESSAGE[code], status: ERROR_STATUS[code] };
  if (code === 'VALIDATION_FAILED') error.details = [{ field: 'email', message: 'must be an email' }];
  if (code === 'MFA_REQUIRED') error.mfaToken = 'mQ3v8n1Yb0c2Xk7ZpL4sT9wE6rA5uJ1hG0fD3eC2bB8';
  return { error };
}

/** Controller methods by the operationId the document gives them (`Controller_method`). */
function handlers(app: INestApplication): Map<string, Handler> {
  const found = new Map<string, Handler>();
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as { name: string; prototype: Record<string, unknown> } | null;
      if (!controller) continue;
      for (const key of Object.getOwnPropertyNames(controller.prototype)) {
        if (key !== 'constructor') found.set(`${controller.name}_${key}`, { controller, handler: controller.prototype[key] as object });
      }
    }
  }
  return found;
}

function metadata<T>(key: string, route: Handler): T | undefined {
  return (Reflect.getMetadata(key, route.handler) as T | undefined) ?? (Reflect.getMetadata(key, route.controller) as T | undefined);
}

/** The errors every route of this kind can answer. */
function commonErrors(method: string, operation: Operation, route: Handler): DomainErrorCode[] {
  const codes: DomainErrorCode[] = ['RATE_LIMITED', 'INTERNAL_ERROR', 'SERVICE_UNAVAILABLE'];
  const realmMode = metadata<string>(REALM_MODE, route) ?? 'default';
  if (realmMode !== 'none') codes.push('VALIDATION_FAILED', 'REALM_NOT_FOUND');
  // A disabled realm refuses every call of the auth API; administration goes on.
  if (realmMode !== 'none' && !metadata<boolean>(IS_ADMIN, route)) codes.push('REALM_DISABLED');
  if (!metadata<boolean>(IS_PUBLIC, route)) codes.push('INVALID_TOKEN', 'TOKEN_EXPIRED', 'INVALID_DPOP_PROOF');
  if (metadata<boolean>(IS_ADMIN, route)) codes.push('FORBIDDEN');
  if (WITH_BODY.has(method)) codes.push('VALIDATION_FAILED', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE');
  if ((operation.parameters as Parameter[] | undefined)?.some((p) => p.in === 'query' || p.in === 'path')) codes.push('VALIDATION_FAILED');
  return codes;
}

function schemaOf(document: OpenAPIObject, ref: string | undefined): { properties?: Record<string, unknown> } | undefined {
  const name = ref?.replace('#/components/schemas/', '');
  return name ? (document.components?.schemas?.[name] as { properties?: Record<string, unknown> } | undefined) : undefined;
}

/**
 * Completes what decorators alone cannot say: the error responses of every operation (the
 * contract's envelope, one example per code), security and the realm header from the route's
 * own metadata, and the X-Request-Id header on every response.
 */
export function completeDocument(document: OpenAPIObject, routes: Map<string, Handler>): OpenAPIObject {
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const route = operation.operationId ? routes.get(operation.operationId) : undefined;
      if (!route) continue;
      const parameters = (operation.parameters ?? []) as Parameter[];
      operation.parameters = parameters as Operation['parameters'];

      // Body-less actions declare an always-empty body class: the document shows none.
      const bodyRef = (operation.requestBody as { content?: Record<string, { schema?: { $ref?: string } }> } | undefined)?.content?.[
        'application/json'
      ]?.schema?.$ref;
      if (bodyRef?.endsWith('/EmptyBodyDto')) delete operation.requestBody;
      else if (schemaOf(document, bodyRef)?.properties?.deviceFingerprint) {
        parameters.push({
          name: 'X-Device-Fingerprint',
          in: 'header',
          required: false,
          description: 'The device fingerprint, when not in the body',
          schema: { type: 'string', maxLength: 4096 },
        });
      }

      const isPublic = !!metadata<boolean>(IS_PUBLIC, route);
      operation.security = isPublic ? [] : [{ bearer: [] }, { dpop: [] }];
      if (!isPublic) {
        parameters.push({
          name: 'DPoP',
          in: 'header',
          required: false,
          description:
            'With a DPoP-bound access token (`Authorization: DPoP <token>`): a proof by the bound key, with `ath` = ' +
            'base64url(SHA-256(token)); missing or invalid → 401 INVALID_DPOP_PROOF and `WWW-Authenticate: DPoP error="invalid_dpop_proof"`',
          schema: { type: 'string' },
        });
      }
      const realmMode = metadata<string>(REALM_MODE, route) ?? 'default';
      if (realmMode !== 'none' && !parameters.some((p) => p.in === 'header' && p.name.toLowerCase() === 'x-realm-id')) {
        parameters.push({
          name: 'X-Realm-Id',
          in: 'header',
          required: realmMode === 'required',
          description: realmMode === 'required' ? 'The realm administered' : 'The realm; `default` when absent',
          schema: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,62}$' },
        });
      }
      const header = parameters.find((p) => p.in === 'header' && p.name === 'X-Realm-Id');
      if (header && !header.schema) header.schema = { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,62}$' };

      const own = [
        ...((Reflect.getMetadata(API_ERRORS, route.controller) as DomainErrorCode[] | undefined) ?? []),
        ...((Reflect.getMetadata(API_ERRORS, route.handler) as DomainErrorCode[] | undefined) ?? []),
      ];
      const codes = [...new Set([...commonErrors(method, operation, route), ...own])];
      const byStatus = new Map<number, DomainErrorCode[]>();
      for (const code of codes) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
      for (const [status, group] of [...byStatus].sort(([a], [b]) => a - b)) {
        const key = String(status);
        if (operation.responses[key]) continue; // a route's own declaration wins (e.g. /health/ready's 503)
        operation.responses[key] = {
          description: group.join(', '),
          ...([423, 429, 503].includes(status) ? { headers: { 'Retry-After': RETRY_AFTER } } : {}),
          content: {
            'application/json': {
              schema: ENVELOPE,
              examples: Object.fromEntries(group.map((code) => [code, { summary: code, value: example(code) }])),
            },
          },
        };
      }
      for (const response of Object.values(operation.responses) as { headers?: Record<string, unknown> }[]) {
        response.headers = { 'X-Request-Id': REQUEST_ID, ...(response.headers ?? {}) };
      }
    }
  }
  return document;
}

const DESCRIPTION = `Identity and session service: realms, users, sessions, MFA (TOTP, WebAuthn, recovery codes) and
device-fingerprint hijack detection.

* Bodies are JSON; unknown fields are rejected. Timestamps are ISO 8601 UTC with milliseconds.
* Every error has the shape \`{"error": {"code", "message", "status", "details"?, "mfaToken"?}}\`; the
  codes each operation can answer are listed under its error responses, one example per code.
* \`X-Realm-Id\` selects the realm: optional on \`/api/v1/auth/*\` (default \`default\`), required on
  \`/v1/admin/*\`.
* Access tokens are ES256 JWTs (15 minutes) whose \`iss\` is their realm's issuer, \`{JWT_ISSUER}/realms/{realmId}\`
  (\`JWT_ISSUER\` by default the service's own address); a resource server given that issuer finds the keys
  through \`{issuer}/.well-known/openid-configuration\` (\`jwks_uri\`); refresh tokens
  are opaque and single use (a second use within 10 s returns the same successor).
* Rate limits answer 429 \`RATE_LIMITED\` with \`Retry-After\`.`;

/** Swagger UI at /docs and the OpenAPI 3 document at /docs/openapi.json, built on first request. */
export function setupOpenApi(app: INestApplication): void {
  let document: OpenAPIObject | null = null;
  const build = (): OpenAPIObject => {
    document ??= completeDocument(
      SwaggerModule.createDocument(
        app,
        new DocumentBuilder()
          .setTitle('Identity Service API')
          .setVersion('1.0.0')
          .setDescription(DESCRIPTION)
          .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, 'bearer')
          .addSecurity('dpop', {
            type: 'http',
            scheme: 'DPoP',
            description: 'A DPoP-bound access token (`tokenType: "DPoP"`, claim `cnf.jkt`), sent with a `DPoP` proof header (RFC 9449)',
          })
          .addTag('auth', 'Registration, login, tokens, email verification, passwords, own sessions')
          .addTag('mfa', 'The second factor at login and the caller’s own factors')
          .addTag('admin', 'Realm administration: realm-admin of the realm, or super-admin of master')
          .addTag('keys', 'Public keys for resource servers')
          .addTag('operations', 'Health and metrics')
          .build(),
        { extraModels: RESPONSE_SCHEMAS },
      ),
      handlers(app),
    );
    return document;
  };
  SwaggerModule.setup('docs', app, build, {
    jsonDocumentUrl: 'docs/openapi.json',
    raw: ['json'],
    customSiteTitle: 'Identity Service API',
    swaggerOptions: { persistAuthorization: false, displayRequestDuration: true },
  });
}
