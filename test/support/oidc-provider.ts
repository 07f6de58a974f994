import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface, Interface } from 'node:readline';
import { walkProviderPages } from './oidc-provider-pages.mjs';

export interface ProviderAccount {
  email?: string;
  email_verified?: boolean;
  given_name?: string;
  family_name?: string;
  name?: string;
}

/** How the provider misbehaves (see oidc-provider-server.mjs); null: as it is. */
export type Misbehaviour = 'foreign-key' | 'audience' | 'expired' | 'stall' | 'redirect' | null;

/** A real OpenID provider in a child process, and a browser's walk through its login and consent pages. */
export class TestOidcProvider {
  private constructor(
    private readonly child: ChildProcess,
    private readonly lines: Interface,
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
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const lines = createInterface({ input: child.stdout! });
    const line = await new Promise<string>((resolve, reject) => {
      lines.once('line', resolve);
      child.once('exit', (code) => reject(new Error(`the provider exited (${code})`)));
    });
    return new TestOidcProvider(child, lines, (JSON.parse(line) as { issuer: string }).issuer);
  }

  /** From now on the provider misbehaves as `mode` says (`location`: where "redirect" sends the token request). */
  async misbehave(mode: Misbehaviour, location?: string): Promise<void> {
    const ack = new Promise((resolve) => this.lines.once('line', resolve));
    this.child.stdin!.write(`${JSON.stringify({ misbehave: mode, location })}\n`);
    await ack;
  }

  /** How many requests the provider has had for `path` (e.g. "/jwks"). */
  async requestsTo(path: string): Promise<number> {
    const answer = new Promise<string>((resolve) => this.lines.once('line', resolve));
    this.child.stdin!.write(`${JSON.stringify({ count: path })}\n`);
    return (JSON.parse(await answer) as { count: number }).count;
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
  signIn(authorizationUrl: string, account: string, options: { cancel?: boolean } = {}): Promise<string> {
    return walkProviderPages(this.issuer, authorizationUrl, account, options);
  }
}
