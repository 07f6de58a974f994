import {
  AccessTokenError,
  KeysUnavailableError,
  protectedResource,
  type AccessTokenVerifier,
  type RequestLike,
  type TokenRequest,
  type VerifiedAccessToken,
} from '../src/index';

/*
 * protectedResource without a service: a verifier of the test's own stands in, to pin down the
 * answers the e2e test (protected-resource.e2e-spec.ts) cannot provoke, and the URLs it builds.
 */

const ISSUER = 'https://id.example.test/realms/acme';
const RESOURCE = 'https://api.example.test/mcp';

function token(scopes: string[], scheme: 'Bearer' | 'DPoP' = 'Bearer'): VerifiedAccessToken {
  return {
    sub: 'u1',
    realm: 'acme',
    sid: '',
    scopes,
    audience: [RESOURCE],
    roles: [],
    appMetadata: {},
    amr: [],
    jti: 'j',
    iat: 0,
    exp: 1,
    scheme,
    claims: {},
  };
}

function answering(outcome: VerifiedAccessToken | Error): AccessTokenVerifier & { seen: TokenRequest[] } {
  const seen: TokenRequest[] = [];
  return {
    seen,
    verify: async (request) => {
      seen.push(request);
      if (outcome instanceof Error) throw outcome;
      return outcome;
    },
  };
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
  next: unknown[];
}

async function run(
  middleware: (req: RequestLike, res: never, next: (e?: unknown) => void) => void,
  req: Partial<RequestLike>,
): Promise<Answer> {
  return new Promise((resolve) => {
    const answer: Answer = { status: 0, headers: {}, body: '', next: [] };
    const res = {
      statusCode: 0,
      setHeader: (name: string, value: string) => (answer.headers[name.toLowerCase()] = value),
      end: (body: string) => resolve({ ...answer, status: res.statusCode, body }),
    };
    // The caller's object itself, so that what the middleware sets on it is seen.
    const request = Object.assign(req, { method: req.method ?? 'GET', headers: req.headers ?? { host: 'internal:8080' } });
    middleware(request as RequestLike, res as never, (error?: unknown) => resolve({ ...answer, next: [error] }));
  });
}

describe('protectedResource (unit)', () => {
  it('names the public origin in challenges and checks DPoP against it, the resource’s path after the well-known one', async () => {
    const verifier = answering(new AccessTokenError('missing_token', 'An access token is required', 'Bearer'));
    const api = protectedResource({ issuer: ISSUER, resource: RESOURCE, publicOrigin: 'https://mcp.example.test/', verifier });
    const answer = await run(api.protect(), { originalUrl: '/mcp?x=1', protocol: 'http' });
    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toBe(
      'Bearer resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp", DPoP algs="ES256 EdDSA"',
    );
    expect(verifier.seen[0].url).toBe('https://mcp.example.test/mcp?x=1');
    // Without a public origin: the request's.
    const local = protectedResource({ issuer: ISSUER, resource: RESOURCE, verifier });
    expect(local.metadataUrl({ method: 'GET', headers: { host: 'internal:8080' }, protocol: 'http' })).toBe(
      'http://internal:8080/.well-known/oauth-protected-resource/mcp',
    );
  });

  it('answers HEAD of the metadata without a body, and passes other paths on', async () => {
    const api = protectedResource({ issuer: ISSUER, resource: RESOURCE, verifier: answering(token([])) });
    const head = await run(api.metadata, { method: 'HEAD', originalUrl: '/.well-known/oauth-protected-resource/mcp' });
    expect([head.status, head.body, head.headers['content-type']]).toEqual([200, '', 'application/json']);
    const other = await run(api.metadata, { originalUrl: '/mcp' });
    expect(other.next).toEqual([undefined]);
  });

  it('unavailable keys → 503 with Retry-After and no challenge; any other failure goes to the error handler', async () => {
    const down = protectedResource({ issuer: ISSUER, resource: RESOURCE, verifier: answering(new KeysUnavailableError('down')) });
    const answer = await run(down.protect(), { originalUrl: '/mcp' });
    expect([answer.status, answer.headers['retry-after'], answer.headers['www-authenticate']]).toEqual([503, '5', undefined]);
    const boom = new Error('boom');
    const broken = protectedResource({ issuer: ISSUER, resource: RESOURCE, verifier: answering(boom) });
    expect((await run(broken.protect(), { originalUrl: '/mcp' })).next).toEqual([boom]);
  });

  it('a DPoP token lacking a scope is challenged with the DPoP scheme; with every scope it passes with req.accessToken', async () => {
    const api = protectedResource({ issuer: ISSUER, resource: RESOURCE, scopes: ['a'], verifier: answering(token(['a'], 'DPoP')) });
    const refused = await run(api.protect('b'), { originalUrl: '/mcp' });
    expect(refused.status).toBe(403);
    expect(refused.headers['www-authenticate']).toBe(
      'DPoP error="insufficient_scope", scope="a b", resource_metadata="http://internal:8080/.well-known/oauth-protected-resource/mcp"',
    );
    const req: Partial<RequestLike> = { originalUrl: '/mcp' };
    expect((await run(api.protect(), req)).next).toEqual([undefined]);
    expect(req.accessToken?.scopes).toEqual(['a']);
  });

  it('a resource at the origin’s root has its metadata at the well-known path itself', () => {
    const api = protectedResource({ issuer: ISSUER, resource: 'https://api.example.test/', verifier: answering(token([])) });
    expect(api.metadataUrl()).toBe('https://api.example.test/.well-known/oauth-protected-resource');
  });
});
