import type { IdentityClient, IdentityProvider } from '../../client/src/index';

/** What the views share: the client of the realm and the page's shell. */
export interface App {
  client: IdentityClient;
  realm: string;
  /** The URL of a view of the console (`#sign-up`, `#security`; '' for the default), keeping the realm. */
  href(view: string): string;
  /** Says something in the page's status region (read out politely); null clears it. */
  notify(message: string | null): void;
  /** The console's own address (realm kept), where identity providers and email links send the browser back. */
  returnTo: string;
  /** The realm's identity providers, asked once (none when the question fails). */
  providers(): Promise<IdentityProvider[]>;
}

/** A view: the title of the page and its content (the first heading takes the focus when it opens). */
export interface View {
  title: string;
  content: HTMLElement;
  /** Called when another view replaces this one (a pending passkey autofill request is aborted). */
  leave?: () => void;
}
