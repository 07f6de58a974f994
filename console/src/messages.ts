import { IdentityError } from '../../client/src/index';

const minutes = (seconds: number | undefined) =>
  seconds === undefined
    ? 'later'
    : seconds < 90
      ? `in ${Math.max(1, Math.round(seconds))} seconds`
      : `in ${Math.ceil(seconds / 60)} minutes`;

/** A failure found on the page itself, its message meant for the user. */
export class Problem extends Error {}

/** What to tell the user about a failed call. */
export function describeError(error: unknown): string {
  if (error instanceof Problem) return error.message;
  if (!(error instanceof IdentityError)) return 'Something went wrong. Please try again.';
  switch (error.code) {
    case 'INVALID_CREDENTIALS':
      // The same code answers every way in; its message says which one failed.
      if (/passkey/i.test(error.message)) return 'That passkey could not sign you in here.';
      if (/code or link/i.test(error.message)) return 'That code is not correct, or it has expired. Ask for a new one if needed.';
      return 'The email address or password is not correct.';
    case 'ACCOUNT_LOCKED':
      return `This account is locked after too many attempts. Try again ${minutes(error.retryAfter)}.`;
    case 'ACCOUNT_SUSPENDED':
      return 'This account is suspended. Contact your administrator.';
    case 'RATE_LIMITED':
      return `Too many attempts. Try again ${minutes(error.retryAfter)}.`;
    case 'INVALID_MFA_CODE':
      return 'That code is not correct, or it was already used.';
    case 'INVALID_VERIFICATION_TOKEN':
      return 'This link is not valid any more: it was used already or it has expired.';
    case 'EMAIL_ALREADY_REGISTERED':
      // status 0: the answer of an identity provider's return, not of the sign-up form.
      return error.status === 0
        ? 'An account with this email address exists already. Sign in to it another way, then link the provider under Security.'
        : 'An account with this email address exists already. Sign in, or reset its password.';
    case 'ACCESS_DENIED':
      return 'Cancelled at the identity provider: nothing was changed.';
    case 'PROVIDER_ERROR':
      return 'The identity provider could not be reached, or its answer could not be trusted. Please try again later.';
    case 'EMAIL_REQUIRED':
      return 'The identity provider did not share your email address, which an account here needs.';
    case 'IDENTITY_IN_USE':
      return 'That account at the identity provider is linked to another user here already.';
    case 'FEDERATION_NOT_STARTED_HERE':
      return 'This sign-in was started in another tab, or too long ago. Please start it again.';
    case 'EMAIL_LINK_OTHER_BROWSER':
      return 'This link works only in the browser where you asked for it. Enter the code from the email instead.';
    case 'WEBAUTHN_FAILED':
      return 'The security key or passkey did not answer, or the request was cancelled.';
    case 'NETWORK_ERROR':
      return 'The service cannot be reached. Check your connection and try again.';
    case 'REALM_NOT_FOUND':
      return 'This sign-in page belongs to no known realm. Check the link.';
    case 'REGISTRATION_DISABLED':
      return 'New accounts cannot be created here. Ask your administrator for an invitation.';
    case 'EMAIL_NOT_VERIFIED':
      return 'Please verify your email address first: open the link in the email we sent you.';
    case 'REALM_DISABLED':
      return 'Sign-in is turned off for this realm.';
    case 'HOOK_DENIED':
      // The realm's own words, written for the user (at most 200 characters).
      return error.message || 'The sign-in was refused.';
    case 'HOOK_FAILED':
      return 'This cannot be decided right now. Please try again in a moment.';
    case 'NOT_SIGNED_IN':
    case 'INVALID_TOKEN':
    case 'TOKEN_EXPIRED':
      return 'Your sign-in has ended. Please sign in again.';
    case 'VALIDATION_FAILED':
      return error.details?.length ? 'Please correct the fields marked below.' : error.message;
    default:
      return error.message || 'Something went wrong. Please try again.';
  }
}

/**
 * The hint shown under every new-password field. Each realm sets its own minimum length and no
 * public endpoint tells it, so the hint names no number; a password the realm refuses gets the
 * service's own reason beside the field ("Must be at least 12 characters.").
 */
export const PASSWORD_HINT =
  'A long passphrase works best. This service sets a minimum length; your email address and common passwords are refused.';
