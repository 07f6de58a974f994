import { AccountEmails } from '../../../src/application/auth/account-emails';
import { DeviceObserver } from '../../../src/application/auth/device-observation';
import { LoginUseCase } from '../../../src/application/auth/login.use-case';
import { MfaChallenges } from '../../../src/application/auth/mfa-challenges';
import { RefreshTokenResolver } from '../../../src/application/auth/refresh-token-resolver';
import { RefreshUseCase } from '../../../src/application/auth/refresh.use-case';
import { NewPassword } from '../../../src/application/auth/new-password';
import { RegisterUseCase } from '../../../src/application/auth/register.use-case';
import { SessionGuardian } from '../../../src/application/auth/session-guardian';
import { SessionIssuer } from '../../../src/application/auth/session-issuer';
import { SignInContinuation } from '../../../src/application/auth/sign-in-continuation';
import { DetectedDevice, DeviceDetector } from '../../../src/application/ports/device-detector';
import { loadConfig } from '../../../src/config/load-config';
import { realmDefaultsFrom } from '../../../src/application/realm/realm-defaults';
import { Realm } from '../../../src/domain/realm/realm';
import { User } from '../../../src/domain/user/user';
import { fakeDpopBinding } from '../../fakes/dpop-fakes';
import { InMemoryOneTimeTokenRepository } from '../../fakes/in-memory-one-time-token.repository';
import { InMemoryRefreshTokenRepository } from '../../fakes/in-memory-refresh-token.repository';
import { InMemorySessionRepository } from '../../fakes/in-memory-session.repository';
import { InMemoryUserRepository } from '../../fakes/in-memory-user.repository';
import {
  FakeAccessTokens,
  FakePasswordHasher,
  FakeSecureTokens,
  FixedClock,
  immediateTransaction,
  InMemoryAuditLog,
  InMemoryMailer,
  NullGeoIpFake,
  SetPasswordBlocklist,
} from '../../fakes/simple-fakes';

class StaticDeviceDetector extends DeviceDetector {
  detect(): DetectedDevice {
    return { browser: 'Chrome', browserMajor: '131', os: 'macOS', osVersion: '15', deviceType: 'browser', name: 'Chrome 131 on macOS' };
  }
}

/** Use cases wired to in-memory fakes: no Nest, no database. */
export function authFixture(users: User[] = []) {
  const config = loadConfig({ LOCKOUT_MAX_FAILURES: '3' });
  const clock = new FixedClock();
  const realm = Realm.create({ id: 'default', name: 'Default', now: clock.now() }, realmDefaultsFrom(config));
  const userRepo = new InMemoryUserRepository(users);
  const sessions = new InMemorySessionRepository();
  const refreshTokens = new InMemoryRefreshTokenRepository(sessions, userRepo);
  const oneTimeTokens = new InMemoryOneTimeTokenRepository();
  const audit = new InMemoryAuditLog();
  const mailer = new InMemoryMailer();
  const hasher = new FakePasswordHasher();
  const secureTokens = new FakeSecureTokens();
  const accessTokens = new FakeAccessTokens();
  const devices = new DeviceObserver(new StaticDeviceDetector());
  const dpop = fakeDpopBinding(config);
  const issuer = new SessionIssuer(sessions, refreshTokens, accessTokens, secureTokens, devices, new NullGeoIpFake(), dpop);
  const mfa = new MfaChallenges(oneTimeTokens, secureTokens);
  const guardian = new SessionGuardian();
  const accountEmails = new AccountEmails(oneTimeTokens, secureTokens, mailer, config);
  const newPassword = new NewPassword(userRepo, sessions, oneTimeTokens, hasher, new SetPasswordBlocklist(), accountEmails, audit);
  const register = new RegisterUseCase(userRepo, newPassword, accountEmails, audit, immediateTransaction, clock);
  const continuation = new SignInContinuation(userRepo, issuer, devices, mfa, audit, immediateTransaction, clock);
  const login = new LoginUseCase(userRepo, hasher, issuer, devices, continuation, audit, immediateTransaction, clock);
  const resolver = new RefreshTokenResolver(refreshTokens, secureTokens, dpop, audit, clock);
  const refresh = new RefreshUseCase(
    refreshTokens,
    sessions,
    secureTokens,
    issuer,
    guardian,
    audit,
    immediateTransaction,
    clock,
    config,
    resolver,
  );
  const client = { ip: '203.0.113.9', userAgent: 'Mozilla/5.0', acceptLanguage: 'en', fingerprint: null };
  return {
    resolver,
    config,
    clock,
    realm,
    userRepo,
    sessions,
    refreshTokens,
    oneTimeTokens,
    audit,
    mailer,
    hasher,
    newPassword,
    register,
    login,
    continuation,
    issuer,
    mfa,
    refresh,
    client,
  };
}
