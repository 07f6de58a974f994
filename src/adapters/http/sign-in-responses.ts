import { Injectable } from '@nestjs/common';
import type { Response } from 'express';
import { SignInOutcome } from '../../application/sign-in/sign-in-continuation';
import { Realm } from '../../domain/realm/realm';
import { present } from './presenters';
import { RefreshCookies } from './refresh-cookies';
import { AppRequest } from './request-context';

/** The answer of every sign-in (password, passkey, email code): tokens, or the second step's mfaToken. */
@Injectable()
export class SignInResponses {
  constructor(private readonly cookies: RefreshCookies) {}

  present(req: AppRequest, res: Response, realm: Realm, outcome: SignInOutcome) {
    if (outcome.kind === 'mfa-required') {
      return {
        user: present.authUser(outcome.user),
        tokens: null,
        requiresMfa: true,
        mfaToken: outcome.mfaToken,
        mfaMethods: outcome.methods,
      };
    }
    return { user: present.authUser(outcome.user), tokens: this.cookies.deliver(req, res, realm.id, outcome.tokens), requiresMfa: false };
  }
}
