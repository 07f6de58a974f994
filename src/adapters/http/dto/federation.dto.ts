import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsBoolean, IsOptional, IsString, Matches, MaxLength, ValidateIf } from 'class-validator';

export class ProvidersQuery {
  @ApiPropertyOptional({ description: 'An address: the answer also names the organization its domain belongs to (home-realm discovery)' })
  @IsOptional()
  @IsString()
  @MaxLength(254)
  email?: string;
}

export class StartFederationDto {
  @ApiProperty({ example: 'https://app.example.com/auth/callback', description: 'An allowedReturnUrls entry or a console page' })
  @IsString()
  @MaxLength(2048)
  returnTo: string;

  @ApiProperty({
    example: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    description: 'base64url SHA-256 of the app’s code verifier (S256)',
  })
  @IsString()
  @Matches(/^[A-Za-z0-9_-]{43}$/, { message: 'must be the 43-character base64url S256 challenge of a code verifier' })
  codeChallenge: string;

  @ApiPropertyOptional({ description: 'Device fingerprint, as at login (≤ 4 KiB)' })
  @IsOptional()
  @IsString()
  deviceFingerprint?: string;

  @ApiPropertyOptional({ description: 'With an access token: link the provider’s account to the caller instead of signing in' })
  @IsOptional()
  @IsBoolean()
  link?: boolean;
}

/** A one-time code the callback handed back, with the verifier of the start's challenge. */
export class LinkIdentityDto {
  @ApiProperty({ description: 'The code from returnTo (?link_code=… for a link, ?code=… for a sign-in)' })
  @IsString()
  @MaxLength(256)
  code: string;

  @ApiProperty({ description: 'The verifier of the start’s codeChallenge (43–128 characters of [A-Za-z0-9-._~])' })
  @IsString()
  @Matches(/^[A-Za-z0-9._~-]{43,128}$/, { message: 'must be 43 to 128 characters of [A-Za-z0-9-._~]' })
  codeVerifier: string;
}

export class ExchangeLoginCodeDto extends LinkIdentityDto {
  @ApiPropertyOptional({ description: 'Device fingerprint, as at login (≤ 4 KiB)' })
  @IsOptional()
  @IsString()
  deviceFingerprint?: string;
}

class IdentityProviderFields {
  @ApiPropertyOptional({ example: 'Acme SSO', maxLength: 100 })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  displayName?: string;

  @ApiPropertyOptional({ example: 'https://login.acme.example', description: 'Its discovery document is read and must name this issuer' })
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  issuer?: string;

  @ApiPropertyOptional({ example: 'identity-service' })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  clientId?: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: 'Stored encrypted, never returned; null or absent: a public client (PKCE alone)',
  })
  @ValidateIf((_o, v) => v !== null && v !== undefined)
  @IsString()
  @MaxLength(1024)
  clientSecret?: string | null;

  @ApiPropertyOptional({ type: [String], example: ['openid', 'email', 'profile'], description: 'Must hold openid' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(20)
  @IsString({ each: true })
  scopes?: string[];

  @ApiPropertyOptional({ default: true })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;

  @ApiPropertyOptional({ default: true, description: 'Let the provider’s email_verified link or claim accounts with that address' })
  @IsOptional()
  @IsBoolean()
  trustEmailVerified?: boolean;
}

export class CreateIdentityProviderDto extends IdentityProviderFields {
  @ApiProperty({ example: 'acme', pattern: '^[a-z0-9][a-z0-9-]{0,62}$' })
  @IsString()
  @MaxLength(63)
  alias: string;

  @ApiProperty({ example: 'Acme SSO' })
  @IsString()
  @MaxLength(1000)
  declare displayName: string;

  @ApiProperty({ example: 'https://login.acme.example' })
  @IsString()
  @MaxLength(2048)
  declare issuer: string;

  @ApiProperty({ example: 'identity-service' })
  @IsString()
  @MaxLength(1000)
  declare clientId: string;
}

/** Any field but the alias. */
export class UpdateIdentityProviderDto extends IdentityProviderFields {}
