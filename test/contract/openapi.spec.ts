import SwaggerParser from '@apidevtools/swagger-parser';
import { ERROR_STATUS } from '../../src/adapters/http/errors/error-status';
import { ADMIN_ENV, adminApi, superAdmin } from '../support/admin-flows';
import { bearer, signedInUser } from '../support/flows';
import { createTestApp, TestApp } from '../support/test-app';
import { CONTRACT_ROUTES, ContractRoute } from './api-routes';

type Json = Record<string, unknown>;
interface Operation {
  security?: unknown[];
  parameters?: { name: string; in: string; required?: boolean }[];
  requestBody?: { content: Record<string, { schema: Json }> };
  responses: Record<
    string,
    { description: string; content?: Record<string, { schema?: Json; examples?: Record<string, { value: { error: Json } }> }> }
  >;
}
interface Document {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Json> };
}

/** Where `value` departs from `schema` (a dereferenced OpenAPI schema): missing, unknown or mistyped fields. */
function departures(value: unknown, schema: Json, at = '$'): string[] {
  if (value === null) return schema.nullable ? [] : [`${at}: null`];
  if (Array.isArray(schema.oneOf))
    return (schema.oneOf as Json[]).some((s) => departures(value, s, at).length === 0) ? [] : [`${at}: matches no oneOf`];
  if (Array.isArray(schema.allOf)) return (schema.allOf as Json[]).flatMap((s) => departures(value, s, at));
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) return [`${at}: ${JSON.stringify(value)} not in enum`];
  switch (schema.type) {
    case 'object': {
      if (typeof value !== 'object' || Array.isArray(value)) return [`${at}: not an object`];
      const record = value as Json;
      const properties = (schema.properties ?? {}) as Record<string, Json>;
      const problems = ((schema.required ?? []) as string[]).filter((k) => !(k in record)).map((k) => `${at}.${k}: missing`);
      for (const [key, field] of Object.entries(record)) {
        if (properties[key]) problems.push(...departures(field, properties[key], `${at}.${key}`));
        else if (typeof schema.additionalProperties === 'object')
          problems.push(...departures(field, schema.additionalProperties as Json, `${at}.${key}`));
        else if (!schema.additionalProperties) problems.push(`${at}.${key}: not documented`);
      }
      return problems;
    }
    case 'array':
      return Array.isArray(value)
        ? value.flatMap((item, i) => departures(item, (schema.items ?? {}) as Json, `${at}[${i}]`))
        : [`${at}: not an array`];
    case 'integer':
    case 'number':
      return typeof value === 'number' ? [] : [`${at}: not a number`];
    case 'string':
    case 'boolean':
      return typeof value === schema.type ? [] : [`${at}: not a ${schema.type}`];
    default:
      return [];
  }
}

const label = (r: ContractRoute) => `${r.method.toUpperCase()} ${r.path}`;

describe('OpenAPI document: /docs and /docs/openapi.json', () => {
  let t: TestApp;
  let doc: Document;
  let resolved: Document;

  beforeAll(async () => {
    t = await createTestApp({ env: ADMIN_ENV });
    const res = await t.api().get('/docs/openapi.json');
    expect(res.status).toBe(200);
    doc = res.body as Document;
    resolved = (await SwaggerParser.dereference(structuredClone(doc) as never)) as unknown as Document;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('is a valid OpenAPI 3 document (swagger-parser)', async () => {
    expect(doc.openapi).toMatch(/^3\./);
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
  });

  it('serves Swagger UI at /docs', async () => {
    const page = await t.api().get('/docs').redirects(1);
    expect(page.status).toBe(200);
    expect(page.text).toContain('swagger-ui');
    const init = await t.api().get('/docs/swagger-ui-init.js');
    expect(init.status).toBe(200);
    expect(init.text).toContain('"openapi"');
  });

  it('describes exactly the routes of the contract, no more, no fewer', () => {
    const documented = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(documented.sort()).toEqual(CONTRACT_ROUTES.map(label).sort());
  });

  describe.each(CONTRACT_ROUTES.map((r) => [label(r), r] as const))('%s', (_name, route) => {
    const op = () => doc.paths[route.path]?.[route.method];

    it(`answers ${route.status} with a response schema and an example`, () => {
      const success = op().responses[String(route.status)];
      expect(success).toBeDefined();
      // A redirect (the identity provider's callback) answers with where to go, no body.
      if (route.status === 303) return expect((success as { headers?: Json }).headers?.Location).toBeDefined();
      const content = success.content ?? {};
      const [type] = Object.keys(content);
      expect(type).toBe(route.path === '/metrics' ? 'text/plain' : 'application/json');
      expect(content[type].schema).toBeDefined();
      if (type === 'application/json') {
        const schema = resolved.paths[route.path][route.method].responses[String(route.status)].content![type].schema!;
        expect(schema.type).toBe('object');
        expect(JSON.stringify(schema)).toContain('"example"');
      }
    });

    it('gives every status a schema, errors the contract envelope with one example per code', () => {
      for (const [status, response] of Object.entries(op().responses)) {
        if (status === '303') continue;
        const schemas = Object.values(response.content ?? {}).map((c) => c.schema);
        expect({ status, schemas: schemas.length }).toEqual({ status, schemas: expect.any(Number) });
        expect(schemas.length).toBeGreaterThan(0);
        if (Number(status) >= 400 && !(route.path === '/health/ready' && status === '503')) {
          const json = response.content!['application/json'];
          expect(json.schema).toEqual({ $ref: '#/components/schemas/ErrorEnvelope' });
          for (const [code, example] of Object.entries(json.examples ?? {})) {
            expect(example.value.error).toMatchObject({ code, status: Number(status), message: expect.any(String) });
          }
        }
      }
    });

    it('lists the error codes the contract names for it', () => {
      const missing = route.errors.filter(
        (code) => !op().responses[String(ERROR_STATUS[code])]?.content?.['application/json']?.examples?.[code],
      );
      expect(missing).toEqual([]);
    });

    it(`is ${route.auth === 'bearer' ? 'protected by a bearer token' : 'public'} and documents X-Realm-Id`, () => {
      expect(op().security).toEqual(route.auth === 'bearer' ? [{ bearer: [] }, { dpop: [] }] : []);
      const realm = (op().parameters ?? []).find((p) => p.in === 'header' && p.name === 'X-Realm-Id');
      if (route.path.startsWith('/v1/admin')) expect(realm?.required).toBe(true);
      else if (route.path.startsWith('/api/v1/auth')) expect(realm?.required).toBe(false);
      else expect(realm).toBeUndefined();
    });
  });

  it('describes request bodies with their fields, and none for body-less actions', () => {
    const body = (method: string, path: string) =>
      resolved.paths[path][method].requestBody?.content['application/json'].schema as Json | undefined;
    expect(body('post', '/api/v1/auth/register')).toMatchObject({
      required: ['email', 'password', 'name'],
      properties: { email: { example: 'alice@example.com' } },
    });
    expect(Object.keys((body('post', '/api/v1/auth/login')!.properties as Json) ?? {})).toEqual(['email', 'password', 'deviceFingerprint']);
    expect(body('post', '/api/v1/auth/mfa/verify')!.properties).toMatchObject({ type: { enum: ['totp', 'webauthn', 'recovery'] } });
    expect(body('put', '/v1/admin/users/{id}/roles')!.required).toEqual(['roles']);
    expect(body('post', '/v1/admin/users/{id}/activate')).toBeUndefined();
    expect(body('get', '/api/v1/auth/me')).toBeUndefined();
  });

  it('describes the shapes of the contract: error envelope, login, user, session, pagination', () => {
    const schemas = resolved.components.schemas;
    expect(Object.keys((schemas.ErrorBodyView as Json).properties as Json)).toEqual(['code', 'message', 'status', 'details', 'mfaToken']);
    expect((schemas.ErrorBodyView as { required: string[] }).required).toEqual(['code', 'message', 'status']);
    expect(((schemas.ErrorBodyView as Json).properties as Record<string, Json>).code.enum).toEqual(Object.keys(ERROR_STATUS));
    const login = resolved.paths['/api/v1/auth/login'].post.responses['200'].content!['application/json'].schema!;
    expect(Object.keys(login.properties as Json)).toEqual(['user', 'tokens', 'requiresMfa', 'mfaToken', 'mfaMethods']);
    const me = resolved.paths['/api/v1/auth/me'].get.responses['200'].content!['application/json'].schema!;
    expect(Object.keys(((me.properties as Record<string, Json>).user.properties as Json) ?? {})).toEqual([
      'id',
      'email',
      'emailVerified',
      'profile',
      'mfa',
      'status',
      'roles',
      'appMetadata',
      'hasPassword',
      'identities',
      'createdAt',
      'lastLoginAt',
    ]);
    const sessions = resolved.paths['/v1/admin/sessions'].get.responses['200'].content!['application/json'].schema!;
    expect(Object.keys(sessions.properties as Json)).toEqual(['sessions', 'pagination']);
    const ready = resolved.paths['/health/ready'].get.responses['503'].content!['application/json'].schema!;
    expect(Object.keys(ready.properties as Json)).toEqual(['status', 'checks']);
  });

  it('puts Retry-After on 423 and 429 answers and X-Request-Id on every answer', () => {
    const login = doc.paths['/api/v1/auth/login'].post.responses as Record<string, { headers?: Json }>;
    expect(Object.keys(login['423'].headers ?? {})).toContain('Retry-After');
    expect(Object.keys(login['429'].headers ?? {})).toContain('Retry-After');
    for (const item of Object.values(doc.paths)) {
      for (const operation of Object.values(item)) {
        for (const response of Object.values(operation.responses) as { headers?: Json }[])
          expect(Object.keys(response.headers ?? {})).toContain('X-Request-Id');
      }
    }
  });

  it('matches what the service really answers (success and error bodies against their schemas)', async () => {
    const schemaFor = (method: string, path: string, status: number) =>
      resolved.paths[path][method].responses[String(status)].content!['application/json'].schema!;
    const user = await signedInUser(t);
    const root = await superAdmin(t);
    const admin = adminApi(t, root.accessToken, 'default');
    const organization = await admin.post('/organizations').send({ name: 'Acme', slug: 'acme-openapi', domains: ['acme-openapi.example'] });
    const orgId = organization.body.organization?.id as string;
    const mine = (path: string) =>
      t
        .api()
        .get(`/api/v1/auth/organizations${path}`)
        .set(...bearer(user.accessToken));
    const calls: [string, string, number, { status: number; body: unknown }][] = [
      ['post', '/v1/admin/organizations', 201, organization],
      ['get', '/v1/admin/organizations', 200, await admin.get('/organizations')],
      ['get', '/v1/admin/organizations/{id}', 200, await admin.get(`/organizations/${orgId}`)],
      ['get', '/v1/admin/organizations/{id}', 404, await admin.get('/organizations/unknown')],
      [
        'put',
        '/v1/admin/organizations/{id}/members/{userId}',
        200,
        await admin.put(`/organizations/${orgId}/members/${user.id}`).send({ roles: [] }),
      ],
      ['get', '/v1/admin/organizations/{id}/members', 200, await admin.get(`/organizations/${orgId}/members`)],
      [
        'post',
        '/v1/admin/organizations/{id}/invitations',
        201,
        await admin.post(`/organizations/${orgId}/invitations`).send({ email: 'invitee@acme-openapi.example', roles: [] }),
      ],
      ['get', '/v1/admin/organizations/{id}/invitations', 200, await admin.get(`/organizations/${orgId}/invitations`)],
      ['get', '/api/v1/auth/organizations', 200, await mine('')],
      ['get', '/api/v1/auth/organizations/{id}/members', 403, await mine(`/${orgId}/members`)],
      [
        'post',
        '/api/v1/auth/organizations/active',
        200,
        await t
          .api()
          .post('/api/v1/auth/organizations/active')
          .set(...bearer(user.accessToken))
          .send({ organizationId: orgId }),
      ],
      ['get', '/api/v1/auth/providers', 200, await t.api().get('/api/v1/auth/providers?email=bob@acme-openapi.example')],
      [
        'post',
        '/api/v1/auth/register',
        201,
        await t
          .api()
          .post('/api/v1/auth/register')
          .send({ email: `doc.${Date.now()}@example.com`, password: 'correct horse battery staple', name: 'Doc Check' }),
      ],
      [
        'post',
        '/api/v1/auth/login',
        200,
        await t.api().post('/api/v1/auth/login').send({ email: user.email, password: 'correct horse battery staple' }),
      ],
      [
        'post',
        '/api/v1/auth/login',
        401,
        await t.api().post('/api/v1/auth/login').send({ email: user.email, password: 'not the password' }),
      ],
      ['post', '/api/v1/auth/register', 400, await t.api().post('/api/v1/auth/register').send({ email: 'nope', password: 'x', name: '' })],
      [
        'get',
        '/api/v1/auth/me',
        200,
        await t
          .api()
          .get('/api/v1/auth/me')
          .set(...bearer(user.accessToken)),
      ],
      [
        'get',
        '/api/v1/auth/sessions',
        200,
        await t
          .api()
          .get('/api/v1/auth/sessions')
          .set(...bearer(user.accessToken)),
      ],
      [
        'get',
        '/api/v1/auth/mfa',
        200,
        await t
          .api()
          .get('/api/v1/auth/mfa')
          .set(...bearer(user.accessToken)),
      ],
      [
        'post',
        '/api/v1/auth/mfa/totp/setup',
        200,
        await t
          .api()
          .post('/api/v1/auth/mfa/totp/setup')
          .set(...bearer(user.accessToken)),
      ],
      ['post', '/api/v1/auth/refresh', 200, await t.api().post('/api/v1/auth/refresh').send({ refreshToken: user.refreshToken })],
      ['get', '/.well-known/jwks.json', 200, await t.api().get('/.well-known/jwks.json')],
      ['get', '/health/live', 200, await t.api().get('/health/live')],
      ['get', '/health/ready', 200, await t.api().get('/health/ready')],
      ['get', '/v1/admin/users', 200, await admin.get('/users?limit=5')],
      ['get', '/v1/admin/users/{id}', 200, await admin.get(`/users/${user.id}`)],
      ['get', '/v1/admin/sessions', 200, await admin.get('/sessions?limit=5')],
      ['get', '/v1/admin/events', 200, await admin.get('/events?limit=5')],
      ['get', '/v1/admin/realms', 200, await adminApi(t, root.accessToken, 'master').get('/realms')],
      ['get', '/v1/admin/webhooks', 200, await admin.get('/webhooks')],
      ['get', '/v1/admin/webhooks/{id}', 404, await admin.get('/webhooks/00000000-0000-4000-8000-000000000000')],
      ['post', '/v1/admin/webhooks', 400, await admin.post('/webhooks').send({ url: 'https://127.0.0.1/hook', events: ['*'] })],
      ['get', '/v1/admin/realm', 200, await admin.get('/realm')],
      ['patch', '/v1/admin/realm', 200, await admin.patch('/realm').send({ settings: { passwordMinLength: 8 } })],
      ['patch', '/v1/admin/realm', 400, await admin.patch('/realm').send({ settings: { passwordMinLength: 4 } })],
      ['get', '/v1/admin/users/{id}', 404, await admin.get('/users/00000000-0000-4000-8000-000000000000')],
      [
        'post',
        '/v1/admin/resources',
        201,
        await admin.post('/resources').send({ identifier: 'https://api.openapi.example', name: 'API', scopes: [{ name: 'read' }] }),
      ],
      ['get', '/v1/admin/resources', 200, await admin.get('/resources')],
      [
        'post',
        '/v1/admin/clients',
        201,
        await admin.post('/clients').send({ name: 'Backend', type: 'confidential', redirectUris: ['https://app.example/cb'] }),
      ],
      ['get', '/v1/admin/clients', 200, await admin.get('/clients')],
      ['get', '/v1/admin/clients/{clientId}', 404, await admin.get('/clients/unknown')],
      ['post', '/v1/admin/initial-access-tokens', 201, await admin.post('/initial-access-tokens').send({})],
    ];
    const problems = calls.flatMap(([method, path, status, res]) =>
      res.status !== status
        ? [`${method} ${path}: status ${res.status}`]
        : departures(res.body, schemaFor(method, path, status)).map((p) => `${method} ${path} ${status} ${p}`),
    );
    expect(problems).toEqual([]);
  });
});
