import { ClientContext } from '../sign-in/client-context';

/** A sign-in at a provider may take this long (the `state`'s life). */
export const STATE_TTL_SECONDS = 600;
/** The one-time login code handed back to the app. */
export const LOGIN_CODE_TTL_SECONDS = 120;
/** The one-time link code handed back after a link at the provider. */
export const LINK_CODE_TTL_SECONDS = 120;

/** What a `state` holds, from start to callback. */
export interface FlowState {
  returnTo: string;
  /** The app's S256 challenge: the login code works only with its verifier. */
  codeChallenge: string;
  /** The service's own PKCE verifier towards the provider. */
  providerVerifier: string;
  nonce: string;
  client: ClientContext;
  /** Linking to a signed-in user instead of signing in: only this user can redeem the link code. */
  linkUserId?: string;
}

/** What a login code holds, from callback to exchange. */
export interface LoginCodePayload {
  userId: string;
  codeChallenge: string;
  client: ClientContext;
  provider: string;
  /** The identity's `sub`: the code signs in only while (provider, subject) is still linked to `userId`. */
  subject: string;
  /** The realm's `before-sign-in` hook allowed this sign-in at the callback: the exchange does not ask again. */
  hookAllowed?: boolean;
}

/** What a link code holds, from callback to `POST /federation/link`. */
export interface LinkCodePayload {
  /** The user who started the link: only their access token redeems the code. */
  userId: string;
  /** The start's S256 challenge: the code links only with its verifier. */
  codeChallenge: string;
  provider: string;
  subject: string;
  email: string | null;
}

/** The callback for a provider: the redirect URI registered there. */
export function federationRedirectUri(apiUrl: string, alias: string): string {
  return `${apiUrl}/api/v1/auth/federation/${alias}/callback`;
}

/** `returnTo` with the service's parameters added to the query it already has. */
export function withParams(returnTo: string, params: Record<string, string>): string {
  const url = new URL(returnTo);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return url.href;
}
