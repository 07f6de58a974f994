import { LoginUseCase } from '../../../src/application/auth/login.use-case';
import { MfaChallenges } from '../../../src/application/sign-in/mfa-challenges';
import { RefreshTokenResolver } from '../../../src/application/sign-in/refresh-token-resolver';
import { RefreshUseCase } from '../../../src/application/auth/refresh.use-case';
import { NewPassword } from '../../../src/application/account/new-password';
import { RegisterUseCase } from '../../../src/application/auth/register.use-case';
import { SessionIssuer } from '../../../src/application/sign-in/session-issuer';
import { SignInContinuation } from '../../../src/application/sign-in/sign-in-continuation';
import { User } from '../../../src/domain/user/user';
import { useCaseFixture } from './fixture';

/** The sign-in use cases on `useCaseFixture`'s fakes, under the names the auth specs use. */
export function authFixture(users: User[] = []) {
  const f = useCaseFixture({ users, env: { LOCKOUT_MAX_FAILURES: '3' } });
  return {
    ...f,
    userRepo: f.users,
    register: f.build(RegisterUseCase),
    login: f.build(LoginUseCase),
    continuation: f.build(SignInContinuation),
    issuer: f.build(SessionIssuer),
    mfa: f.build(MfaChallenges),
    refresh: f.build(RefreshUseCase),
    resolver: f.build(RefreshTokenResolver),
    newPassword: f.build(NewPassword),
  };
}
