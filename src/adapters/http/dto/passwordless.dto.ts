import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsEmail, IsObject, IsOptional, IsString, Matches, MaxLength, ValidateIf } from 'class-validator';
import { TrimString } from './auth.dto';

export class PasskeyVerifyDto {
  @ApiProperty({ description: 'The challengeId from POST /passkeys/options' })
  @IsString()
  @MaxLength(256)
  challengeId: string;

  @ApiProperty({
    description: 'The authentication response of @simplewebauthn/browser startAuthentication (AuthenticationResponseJSON), as an object',
    type: 'object',
    additionalProperties: true,
  })
  @IsObject()
  response: Record<string, unknown>;

  @ApiPropertyOptional({ description: 'Device fingerprint, as at login (≤ 4 KiB)' })
  @IsOptional()
  @IsString()
  deviceFingerprint?: string;
}

export class EmailCodeRequestDto {
  @ApiProperty({ example: 'alice@example.com', maxLength: 254 })
  @TrimString()
  @IsString()
  @MaxLength(254)
  @IsEmail()
  email: string;

  @ApiPropertyOptional({
    description:
      'With codeChallenge: the page the emailed link opens (`returnTo?email_token=…`), one of the realm’s allowedReturnUrls or a page of the account console',
    example: 'https://app.example.com/auth/email-link',
  })
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  returnTo?: string;

  @ApiPropertyOptional({
    description: 'With returnTo: the base64url SHA-256 (S256) of a code verifier the browser keeps; the link works only with that verifier',
    minLength: 43,
    maxLength: 43,
  })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  codeChallenge?: string;
}

/** RFC 7636 §4.1: 43–128 characters of the unreserved set. */
const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

export class EmailCodeVerifyDto {
  @ApiPropertyOptional({ description: 'With code: the address the code was sent to', example: 'alice@example.com' })
  @ValidateIf((o: EmailCodeVerifyDto) => o.code !== undefined || o.token === undefined)
  @IsString()
  @MaxLength(1024)
  email?: string;

  @ApiPropertyOptional({ description: 'With email: the 8-digit code from the email (spaces ignored)', example: '0493 1207' })
  @ValidateIf((o: EmailCodeVerifyDto) => o.email !== undefined || o.token === undefined)
  @IsString()
  @MaxLength(32)
  code?: string;

  @ApiPropertyOptional({ description: 'With codeVerifier: the `email_token` of the link' })
  @ValidateIf((o: EmailCodeVerifyDto) => o.codeVerifier !== undefined || (o.email === undefined && o.code === undefined))
  @IsString()
  @MaxLength(256)
  token?: string;

  @ApiPropertyOptional({ description: 'With token: the code verifier kept by the browser that asked for the link (43–128 characters)' })
  @ValidateIf((o: EmailCodeVerifyDto) => o.token !== undefined)
  @IsString()
  @Matches(CODE_VERIFIER, { message: 'codeVerifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~' })
  codeVerifier?: string;

  @ApiPropertyOptional({ description: 'Device fingerprint, as at login (≤ 4 KiB)' })
  @IsOptional()
  @IsString()
  deviceFingerprint?: string;
}
