import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsObject, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { MFA_FACTOR_TYPES, MfaFactorType } from '../../../application/mfa/second-factors';

export class MfaVerifyDto {
  @ApiProperty({ description: 'The mfaToken from the login response (or from an MFA_REQUIRED error)' })
  @IsString()
  @MaxLength(1024)
  mfaToken: string;

  @ApiProperty({
    description:
      'totp: the 6-digit code; recovery: a recovery code; webauthn: the JSON text of the authentication response of @simplewebauthn/browser startAuthentication',
    example: '123456',
  })
  @IsString()
  @MinLength(1)
  @MaxLength(16384)
  code: string;

  @ApiProperty({ enum: MFA_FACTOR_TYPES })
  @IsIn(MFA_FACTOR_TYPES)
  type: MfaFactorType;

  @ApiPropertyOptional({ description: 'Device fingerprint, as at login (≤ 4 KiB)' })
  @IsOptional()
  @IsString()
  deviceFingerprint?: string;
}

export class MfaTokenDto {
  @ApiProperty()
  @IsString()
  @MaxLength(1024)
  mfaToken: string;
}

export class TotpConfirmDto {
  @ApiProperty({ example: '123456', description: 'A current code from the secret returned by /mfa/totp/setup' })
  @IsString()
  @MaxLength(32)
  code: string;
}

export class PasswordConfirmationDto {
  @ApiPropertyOptional({
    description:
      'The account password, re-checked before the change. An account without a password omits it and needs a sign-in within the last 10 minutes instead.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(4096)
  password?: string;
}

export class WebauthnRegisterOptionsDto {
  @ApiPropertyOptional({ example: 'YubiKey 5C', maxLength: 64 })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  name?: string;

  @ApiPropertyOptional({
    description: 'Register a passkey: a discoverable credential with user verification, which can sign in without a password',
    default: false,
  })
  @IsOptional()
  @IsBoolean()
  passkey?: boolean;
}

export class WebauthnRegisterVerifyDto {
  @ApiProperty({
    description: 'The registration response of @simplewebauthn/browser startRegistration (RegistrationResponseJSON)',
    type: 'object',
    additionalProperties: true,
  })
  @IsObject()
  response: Record<string, unknown>;

  @ApiPropertyOptional({ example: 'YubiKey 5C', maxLength: 64 })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  name?: string;
}
