import { createIdentityClient } from '../src/index.js';

describe('server-side rendering', () => {
  it('imports and creates a cookie-transport client without a window and without network', async () => {
    expect(typeof window).toBe('undefined');
    const fetch = jest.fn();
    const client = createIdentityClient({ baseUrl: 'https://id.example.test', realm: 'acme', transport: 'cookie', fetch });
    await client.ready;
    expect(fetch).not.toHaveBeenCalled();
    expect(client.getSnapshot()).toEqual({ status: 'signed-out', reason: null });
    expect(client.getServerSnapshot()).toEqual({ status: 'loading' });
    expect(client.getServerSnapshot()).toBe(client.getServerSnapshot());
    client.destroy();
  });
});
