import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export interface ProviderAccount {
  email?: string;
  email_verified?: boolean;
  given_name?: string;
  family_name?: string;
  name?: string;
}

/** A real OpenID provider in a child process, and a browser's walk through its login and consent pages. */
export class TestOidcProvider {
  private constructor(
    private readonly child: ChildProcess,
    readonly issuer: string,
  ) {}

  static async start(options: {
    redirectUris: string[];
    accounts: Record<string, ProviderAccount>;
    clientSecret?: string;
  }): Promise<TestOidcProvider> {
    const child = spawn(process.execPath, [join(__dirname, 'oidc-provider-server.mjs')], {
      env: {
        ...process.env,
        NODE_OPTIONS: '',
        REDIRECT_URIS: options.redirectUris.join(','),
        ACCOUNTS: JSON.stringify(options.accounts),
        ...(options.clientSecret ? { CLIENT_SECRET: options.clientSecret } : {}),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`the provider exited (${code})`)));
    });
    return new TestOidcProvider(child, (JSON.parse(line) as { issuer: string }).issuer);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill();
    await exited;
  }

  /**
   * Follows the authorization URL through the provider's own pages as a browser would (cookies,
   * the login form with `account`, the consent form), or cancels at the login page; returns the
   * URL the provider sends the browser back to (the service's callback).
   */
  async signIn(authorizationUrl: string, account: string, options: { cancel?: boolean } = {}): Promise<string> {
    const jar = new Map<string, string>();
    const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const remember = (res: Response) => {
      for (const set of res.headers.getSetCookie()) {
        const [pair] = set.split(';');
        const at = pair.indexOf('=');
        jar.set(pair.slice(0, at).trim(), pair.slice(at + 1));
      }
    };
    let url = authorizationUrl;
    let form: string | null = null;
    for (let step = 0; step < 12; step += 1) {
      const res: Response = await fetch(url, {
        method: form ? 'POST' : 'GET',
        redirect: 'manual',
        headers: { cookie: cookie(), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
        ...(form ? { body: form } : {}),
      });
      remember(res);
      form = null;
      if (res.status >= 300 && res.status < 400) {
        const next = new URL(res.headers.get('location')!, url).href;
        if (!next.startsWith(this.issuer)) return next;
        url = next;
        continue;
      }
      const html = await res.text();
      const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1];
      if (!prompt) throw new Error(`unexpected provider page ${res.status}: ${html.slice(0, 300)}`);
      if (options.cancel) {
        url = `${url.replace(/\/$/, '')}/abort`;
        continue;
      }
      form = prompt === 'login' ? `prompt=login&login=${encodeURIComponent(account)}&password=any` : 'prompt=consent';
    }
    throw new Error('the provider did not send the browser back');
  }
}
