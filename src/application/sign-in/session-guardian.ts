import { Injectable } from '@nestjs/common';
import { Realm } from '../../domain/realm/realm';
import { Session } from '../../domain/session/session';
import { User } from '../../domain/user/user';
import { ClientContext } from './client-context';

/**
 * Compares each use of a session with its reference device and answers a
 * mismatch (re-verification or revocation). Extended by hijack detection; this base accepts every use.
 */
@Injectable()
export class SessionGuardian {
  /** @throws DomainError MFA_REQUIRED | REAUTHENTICATION_REQUIRED | VALIDATION_FAILED */
  async check(_input: { realm: Realm; user: User; session: Session; client: ClientContext; now: Date }): Promise<void> {}
}
