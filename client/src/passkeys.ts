/**
 * Passkey sign-in in the browser: loaded on first use (a chunk of its own, beside the WebAuthn
 * library), so pages that never offer a passkey do not carry it.
 *
 * A browser allows one pending `navigator.credentials.get` at a time. The autofill request
 * (`mediation: "conditional"`) waits for as long as the page is open, so it is aborted before a
 * button starts a modal one, and it is restarted with a fresh challenge before the service's
 * challenge expires (browsers ignore the timeout of a conditional request).
 */

/** The functions of `@simplewebauthn/browser` a passkey sign-in needs. */
export interface PasskeyBrowser {
  startAuthentication(options: { optionsJSON: never; useBrowserAutofill?: boolean }): Promise<unknown>;
  /** Aborts the pending ceremony (WebAuthnAbortService.cancelCeremony). */
  cancelCeremony?(): void;
  /** Whether the browser offers passkeys in autofill (browserSupportsWebAuthnAutofill). */
  browserSupportsWebAuthnAutofill?(): Promise<boolean>;
}

export interface PasskeyChallenge {
  challengeId: string;
  options: Record<string, unknown> & { timeout?: number };
}

export interface PasskeyDeps<R> {
  browser: () => Promise<PasskeyBrowser>;
  /** POST /passkeys/options */
  challenge: () => Promise<PasskeyChallenge>;
  /** POST /passkeys/verify */
  verify: (challengeId: string, response: unknown) => Promise<R>;
}

/** An autofill request in progress. */
export interface PasskeyAutofill<R> {
  /** Settles with the sign-in once the user picks a passkey from autofill; null once stopped, or where autofill is not offered. */
  readonly result: Promise<R | null>;
  /** Aborts the pending request (a button is about to start another, or the page moves on); resolves once it has ended. */
  stop(): Promise<void>;
}

/** Restart the autofill request this long before its challenge expires. */
const RENEW_BEFORE_MS = 30_000;
const DEFAULT_CHALLENGE_MS = 300_000;

export function passkeySignIn<R>(deps: PasskeyDeps<R>) {
  let current: { stop(): Promise<void> } | null = null;

  function autofill(): PasskeyAutofill<R> {
    // The previous request (if any) ends before this one asks the browser.
    const previous = current?.stop();
    let stopped = false;
    let renewing = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let browser: PasskeyBrowser | null = null;
    /** Whether this request's ceremony is in the browser now (only then is there anything to abort). */
    let asking = false;
    let ended: Promise<void> = Promise.resolve();
    const handle = {
      stop(): Promise<void> {
        if (!stopped) {
          stopped = true;
          clearTimeout(timer);
          if (asking) browser?.cancelCeremony?.();
        }
        return ended;
      },
    };
    current = handle;
    const run = async (): Promise<R | null> => {
      await previous;
      browser = await deps.browser();
      if (browser.browserSupportsWebAuthnAutofill && !(await browser.browserSupportsWebAuthnAutofill())) return null;
      while (!stopped) {
        const { challengeId, options } = await deps.challenge();
        if (stopped) return null;
        const lifetime = typeof options.timeout === 'number' ? options.timeout : DEFAULT_CHALLENGE_MS;
        renewing = false;
        timer = setTimeout(
          () => {
            renewing = true;
            browser?.cancelCeremony?.();
          },
          Math.max(1_000, lifetime - RENEW_BEFORE_MS),
        );
        try {
          asking = true;
          const response = await browser.startAuthentication({ optionsJSON: options as never, useBrowserAutofill: true }).finally(() => {
            asking = false;
          });
          clearTimeout(timer);
          if (stopped) return null;
          return await deps.verify(challengeId, response);
        } catch (error) {
          clearTimeout(timer);
          // Aborted to renew the challenge: ask again; aborted by stop(): done.
          if (stopped) return null;
          if (!renewing) throw error;
        }
      }
      return null;
    };
    const result = run().finally(() => {
      if (current === handle) current = null;
    });
    ended = result.then(
      () => undefined,
      () => undefined,
    );
    return { result, stop: () => handle.stop() };
  }

  /** The button: a modal request, after the autofill one (if any) is aborted. */
  async function modal(): Promise<R> {
    await current?.stop();
    current = null;
    const browser = await deps.browser();
    const { challengeId, options } = await deps.challenge();
    const response = await browser.startAuthentication({ optionsJSON: options as never });
    return deps.verify(challengeId, response);
  }

  return { autofill, modal };
}
