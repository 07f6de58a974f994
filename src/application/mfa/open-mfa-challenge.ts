import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { MfaChallenges, PendingLogin } from '../sign-in/mfa-challenges';
import { OneTimeToken } from '../ports/one-time-token.repository';

export interface OpenChallenge {
  token: OneTimeToken & { userId: string };
  pending: PendingLogin;
}

/**
 * The live challenge behind a presented mfaToken.
 * @throws DomainError INVALID_TOKEN (unknown, used, dead, other realm) | TOKEN_EXPIRED
 */
export async function openMfaChallenge(challenges: MfaChallenges, realm: Realm, mfaToken: string, now: Date): Promise<OpenChallenge> {
  if (typeof mfaToken !== 'string' || mfaToken.length < 16 || mfaToken.length > 256) {
    throw new DomainError('INVALID_TOKEN', 'The MFA token is invalid');
  }
  const token = await challenges.find(mfaToken);
  if (!token?.userId || token.realmId !== realm.id || token.usedAt) throw new DomainError('INVALID_TOKEN', 'The MFA token is invalid');
  if (token.expiresAt <= now) throw new DomainError('TOKEN_EXPIRED', 'The MFA token has expired; sign in again');
  return { token: { ...token, userId: token.userId }, pending: token.payload as unknown as PendingLogin };
}
