import { createIdentityClient, IdentityError, type IdentityClient, type WebAuthnBrowser } from '../src/index.js';
import { FakeService } from './fake-service.js';

const BASE = 'https://id.example.test';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A browser's WebAuthn as @simplewebauthn/browser drives it: one pending request at a time (a new
 * one aborts the pending one, as its WebAuthnAbortService does), conditional requests that wait
 * until the user picks a passkey, and a record of what was asked.
 */
class FakeWebAuthn {
  readonly calls: { useBrowserAutofill: boolean; challenge: string }[] = [];
  pendingCount = 0;
  maxPending = 0;
  cancelled = 0;
  autofillSupported = true;
  private pending: { resolve: (value: unknown) => void; reject: (error: Error) => void; autofill: boolean } | null = null;

  readonly browser: WebAuthnBrowser = {
    startAuthentication: ({ optionsJSON, useBrowserAutofill = false }) => {
      this.abortPending();
      const options = optionsJSON as unknown as { challenge: string };
      this.calls.push({ useBrowserAutofill, challenge: options.challenge });
      this.pendingCount += 1;
      this.maxPending = Math.max(this.maxPending, this.pendingCount);
      return new Promise((resolve, reject) => {
        const settle = () => (this.pendingCount -= 1);
        this.pending = {
          resolve: (value) => (settle(), resolve(value)),
          reject: (error) => (settle(), reject(error)),
          autofill: useBrowserAutofill,
        };
        // A modal request is answered at once (the user touches the key).
        if (!useBrowserAutofill) this.pick();
      });
    },
    startRegistration: async () => ({ id: 'new-credential' }),
    WebAuthnAbortService: { cancelCeremony: () => this.abortPending() },
    browserSupportsWebAuthnAutofill: async () => this.autofillSupported,
  };

  /** The user picks a passkey for the pending request. */
  pick(): void {
    const pending = this.pending;
    this.pending = null;
    pending?.resolve({ id: 'credential-1', response: { clientDataJSON: 'x' }, type: 'public-key' });
  }

  get autofillPending(): boolean {
    return this.pending?.autofill === true;
  }

  private abortPending(): void {
    const pending = this.pending;
    this.pending = null;
    if (pending) {
      this.cancelled += 1;
      const error = new Error('The operation was aborted');
      error.name = 'AbortError';
      pending.reject(error);
    }
  }
}

describe('passwordless sign-in through the client', () => {
  let service: FakeService;
  let webauthn: FakeWebAuthn;
  let client: IdentityClient;
  const values = new Map<string, string>();

  beforeAll(() => {
    (globalThis as { localStorage?: unknown }).localStorage = {
      getItem: (k: string) => values.get(k) ?? null,
      setItem: (k: string, v: string) => void values.set(k, v),
      removeItem: (k: string) => void values.delete(k),
    };
  });
  afterAll(() => {
    delete (globalThis as { localStorage?: unknown }).localStorage;
  });
  beforeEach(() => {
    values.clear();
    service = new FakeService();
    webauthn = new FakeWebAuthn();
    client = createIdentityClient({ baseUrl: BASE, realm: 'acme', fetch: service.fetch, webauthn: async () => webauthn.browser });
  });
  afterEach(async () => {
    client.destroy();
    await sleep(10);
  });

  const until = async (condition: () => boolean) => {
    for (let i = 0; i < 200 && !condition(); i += 1) await sleep(5);
    expect(condition()).toBe(true);
  };

  it('autofill: a conditional request that signs in when the user picks a passkey', async () => {
    const autofill = client.passkeys.autofill();
    await until(() => webauthn.autofillPending);
    expect(webauthn.calls).toEqual([{ useBrowserAutofill: true, challenge: expect.any(String) }]);
    webauthn.pick();
    await expect(autofill.result).resolves.toMatchObject({ kind: 'signed-in' });
    expect(client.getSnapshot()).toMatchObject({ status: 'signed-in', amr: ['hwk', 'mfa'] });
    const verify = service.requests.find((r) => r.path === '/passkeys/verify')!;
    expect(verify.body).toMatchObject({ challengeId: expect.any(String), response: { id: 'credential-1' } });
  });

  it('the button aborts the autofill request first: never two pending at once', async () => {
    const autofill = client.passkeys.autofill();
    await until(() => webauthn.autofillPending);
    const signedIn = await client.passkeys.signIn();
    expect(signedIn.kind).toBe('signed-in');
    await expect(autofill.result).resolves.toBeNull();
    expect(webauthn.maxPending).toBe(1);
    expect(webauthn.calls.map((c) => c.useBrowserAutofill)).toEqual([true, false]);
    // Each request answered its own challenge, used once.
    expect(service.requests.filter((r) => r.path === '/passkeys/verify')).toHaveLength(1);
  });

  it('renews the autofill challenge before it expires on a page left open', async () => {
    service.passkeyTimeoutMs = 31_000; // renewed 30 s before expiry: after 1 s
    const autofill = client.passkeys.autofill();
    await until(() => webauthn.calls.length >= 2 && webauthn.autofillPending);
    expect(webauthn.cancelled).toBeGreaterThanOrEqual(1);
    expect(new Set(webauthn.calls.map((c) => c.challenge)).size).toBe(webauthn.calls.length);
    webauthn.pick();
    await expect(autofill.result).resolves.toMatchObject({ kind: 'signed-in' });
    const optionsAsked = service.requests.filter((r) => r.path === '/passkeys/options').length;
    expect(optionsAsked).toBe(webauthn.calls.length);
  });

  it('stop() ends the autofill request; where the browser has no passkey autofill nothing is asked', async () => {
    const autofill = client.passkeys.autofill();
    await until(() => webauthn.autofillPending);
    autofill.stop();
    await expect(autofill.result).resolves.toBeNull();
    expect(webauthn.autofillPending).toBe(false);
    webauthn.autofillSupported = false;
    const unsupported = client.passkeys.autofill();
    await expect(unsupported.result).resolves.toBeNull();
    expect(webauthn.calls).toHaveLength(1);
  });

  it('email code: sends, then signs in with the code', async () => {
    await client.emailCode.send('a@example.com');
    expect(service.requests.at(-1)).toMatchObject({ path: '/email-code', body: { email: 'a@example.com' } });
    const result = await client.emailCode.verify('a@example.com', '12345678');
    expect(result.kind).toBe('signed-in');
    expect(client.getSnapshot()).toMatchObject({ status: 'signed-in', amr: ['email'] });
  });

  it('email link: bound to this browser by a PKCE verifier; elsewhere nothing is sent', async () => {
    await client.emailCode.send('a@example.com', { returnTo: 'https://app.example.test/auth/link' });
    const sent = service.requests.at(-1)!;
    expect(sent.body).toMatchObject({
      returnTo: 'https://app.example.test/auth/link',
      codeChallenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    const result = await client.emailCode.completeLink('https://app.example.test/auth/link?email_token=link-1');
    expect(result?.kind).toBe('signed-in');
    const verify = service.requests.at(-1)!;
    expect(verify.body).toMatchObject({ token: 'link-1', codeVerifier: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    // Another browser (no verifier kept): refused on the client, the service never sees the token.
    const before = service.requests.length;
    await expect(client.emailCode.completeLink('https://app.example.test/auth/link?email_token=link-1')).rejects.toEqual(
      expect.objectContaining({ code: 'EMAIL_LINK_OTHER_BROWSER' }),
    );
    expect(service.requests.length).toBe(before);
    await expect(client.emailCode.completeLink('https://app.example.test/auth/link')).resolves.toBeNull();
    expect(IdentityError).toBeDefined();
  });
});
