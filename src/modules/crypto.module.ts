import { Global, Module } from '@nestjs/common';
import { JwtModule } from '@nestjs/jwt';
import { AccessTokens } from '../application/ports/access-tokens';
import { Clock } from '../application/ports/clock';
import { PasswordBlocklist } from '../application/ports/password-blocklist';
import { PasswordHasher } from '../application/ports/password-hasher';
import { SecretCipher } from '../application/ports/secret-cipher';
import { SecureTokens } from '../application/ports/secure-tokens';
import { AesGcmSecretCipher } from '../adapters/crypto/aes-gcm-secret-cipher';
import { BcryptPasswordHasher } from '../adapters/crypto/bcrypt-password-hasher';
import { JwtAccessTokens } from '../adapters/crypto/jwt-access-tokens';
import { NodeSecureTokens } from '../adapters/crypto/node-secure-tokens';
import { SystemClock } from '../adapters/crypto/system-clock';
import { ZxcvbnPasswordBlocklist } from '../adapters/crypto/zxcvbn-password-blocklist';

const bindings = [
  { provide: Clock, useClass: SystemClock },
  { provide: SecureTokens, useClass: NodeSecureTokens },
  { provide: SecretCipher, useClass: AesGcmSecretCipher },
  { provide: PasswordHasher, useClass: BcryptPasswordHasher },
  { provide: PasswordBlocklist, useClass: ZxcvbnPasswordBlocklist },
  { provide: AccessTokens, useExisting: JwtAccessTokens },
];

/** Time, randomness, hashing, encryption and token signing: the primitives every feature shares. */
@Global()
@Module({
  imports: [JwtModule.register({})],
  providers: [...bindings, JwtAccessTokens],
  exports: bindings.map((binding) => binding.provide),
})
export class CryptoModule {}
