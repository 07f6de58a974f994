import http from 'node:http';
import { AddressInfo } from 'node:net';
import { HostResolver, ResolvedAddress } from '../../../src/application/ports/host-resolver';
import { OutboundConnector } from '../../../src/adapters/outbound/outbound-connector';

class MapResolver extends HostResolver {
  constructor(private readonly names: Record<string, string[]>) {
    super();
  }
  async resolve(hostname: string): Promise<ResolvedAddress[]> {
    const found = this.names[hostname];
    if (!found) throw new Error('NXDOMAIN');
    return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  }
}

const STRICT = { allowHttp: false, allowPrivateNetworks: false, field: 'issuer' };
const LOCAL = { allowHttp: true, allowPrivateNetworks: true, field: 'issuer', timeoutMs: 1000 };

describe('OutboundConnector (FED-05, shared with webhooks)', () => {
  let server: http.Server;
  let port: number;
  const seen: { host?: string; url?: string }[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      seen.push({ host: req.headers.host, url: req.url });
      if (req.url === '/redirect') {
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      } else if (req.url === '/stall') {
        // never answers
      } else {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, method: req.method }));
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it.each([
    ['loopback', 'https://127.0.0.1/'],
    ['the cloud metadata address', 'https://169.254.169.254/'],
    ['a private address', 'https://10.1.2.3/'],
    ['loopback written as a number', 'https://2130706433/'],
    ['an IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/'],
    ['a name that resolves to a private address', 'https://idp.internal.test/'],
    ['plain http', 'http://idp.example.com/'],
  ])('refuses %s by default, naming the caller’s field', async (_what, url) => {
    const connector = new OutboundConnector(
      new MapResolver({ 'idp.internal.test': ['192.168.1.10'], 'idp.example.com': ['93.184.215.14'] }),
    );
    await expect(connector.check(url, STRICT)).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      meta: { details: [expect.objectContaining({ field: 'issuer' })] },
    });
  });

  it('refuses a name when any of its addresses is private', async () => {
    const connector = new OutboundConnector(new MapResolver({ 'mixed.test': ['93.184.215.14', '127.0.0.1'] }));
    await expect(connector.check('https://mixed.test/', STRICT)).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
  });

  it('connects to the address it checked, keeping the URL’s host name', async () => {
    const connector = new OutboundConnector(new MapResolver({ 'idp.test': ['127.0.0.1'] }));
    const res = await connector.fetcher(LOCAL)(`http://idp.test:${port}/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, method: 'GET' });
    expect(seen.at(-1)).toEqual({ host: `idp.test:${port}`, url: '/.well-known/openid-configuration' });
  });

  it('answers a redirect with the redirect: it is not followed', async () => {
    const connector = new OutboundConnector(new MapResolver({}));
    const before = seen.length;
    const res = await connector.fetcher(LOCAL)(`http://127.0.0.1:${port}/redirect`);
    expect(res.status).toBe(302);
    expect(seen.length).toBe(before + 1);
  });

  it('gives up on a provider that stalls within its timeout', async () => {
    const connector = new OutboundConnector(new MapResolver({}));
    const started = Date.now();
    await expect(connector.fetcher({ ...LOCAL, timeoutMs: 300 })(`http://127.0.0.1:${port}/stall`)).rejects.toThrow(
      /no answer within 300 ms/,
    );
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('gives up within its timeout on a name whose lookup does not answer', async () => {
    const stalledLookup = new (class extends HostResolver {
      resolve(): Promise<ResolvedAddress[]> {
        return new Promise(() => undefined);
      }
    })();
    const connector = new OutboundConnector(stalledLookup);
    const started = Date.now();
    await expect(connector.fetcher({ ...LOCAL, timeoutMs: 300 })('http://idp.slow-dns.test/token')).rejects.toThrow(
      /no answer within 300 ms/,
    );
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('sends a POST body', async () => {
    const connector = new OutboundConnector(new MapResolver({}));
    const res = await connector.fetcher(LOCAL)(`http://127.0.0.1:${port}/token`, { method: 'POST', body: new URLSearchParams({ a: '1' }) });
    expect(await res.json()).toEqual({ ok: true, method: 'POST' });
  });
});
