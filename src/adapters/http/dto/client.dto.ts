import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsInt, IsString, MaxLength, ValidateIf, ValidateNested } from 'class-validator';
import {
  CLIENT_ACCESS_TOKEN_TTL,
  GRANT_TYPES,
  ID_TOKEN_ALGORITHMS,
  TOKEN_ENDPOINT_AUTH_METHODS,
} from '../../../domain/client/client-rules';
import { MAX_RESOURCE_SCOPES } from '../../../domain/client/resource';
import { MAX_CLIENT_RESOURCES, MAX_CLIENT_SCOPES, MAX_REDIRECT_URIS } from '../../../domain/client/client';
import { INITIAL_ACCESS_TOKEN_TTL } from '../../../application/clients/create-initial-access-token.use-case';

// The forms and rules of each field are the domain's (src/domain/client), which names the field
// it refuses; these decorators check types and sizes only. A field that is absent is unchanged;
// null is accepted only where it clears a value.
const given = (_o: object, value: unknown) => value !== undefined;
const set = (_o: object, value: unknown) => value !== undefined && value !== null;
const TTL = { minimum: CLIENT_ACCESS_TOKEN_TTL.min, maximum: CLIENT_ACCESS_TOKEN_TTL.max };

class ClientFields {
  @ApiPropertyOptional({ example: 'Acme Web', maxLength: 100 })
  @ValidateIf(given)
  @IsString()
  @MaxLength(1000)
  name?: string;

  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_REDIRECT_URIS,
    example: ['https://app.acme.example/callback'],
    description:
      'Absolute, no fragment: https, http on a loopback address (127.0.0.1 or [::1], any port matches), or a private-use scheme containing a dot (com.example.app:/callback). At least one while authorization_code is allowed',
  })
  @ValidateIf(given)
  @IsArray()
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  redirectUris?: string[];

  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_REDIRECT_URIS,
    example: ['https://app.acme.example/'],
    description: 'As redirectUris',
  })
  @ValidateIf(given)
  @IsArray()
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  postLogoutRedirectUris?: string[];

  @ApiPropertyOptional({
    type: [String],
    enum: GRANT_TYPES,
    example: ['authorization_code', 'refresh_token'],
    description: 'Default authorization_code and refresh_token; never client_credentials for a public client',
  })
  @ValidateIf(given)
  @IsArray()
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  grantTypes?: string[];

  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_CLIENT_SCOPES,
    example: ['openid', 'profile', 'email', 'offline_access', 'roles'],
    description: 'Among openid profile email offline_access roles and the scopes of the client’s resources; default the five OpenID scopes',
  })
  @ValidateIf(given)
  @IsArray()
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  scopes?: string[];

  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_CLIENT_RESOURCES,
    example: ['https://api.acme.example'],
    description: 'Identifiers of the realm’s resources the client may ask tokens for',
  })
  @ValidateIf(given)
  @IsArray()
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  resources?: string[];

  @ApiPropertyOptional({ default: false, description: 'A first-party client never asks the user’s consent' })
  @ValidateIf(given)
  @IsBoolean()
  firstParty?: boolean;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: 'https://app.acme.example/backchannel-logout',
    description: 'Receives logout tokens (OpenID Back-Channel Logout); the webhooks’ address rules apply',
  })
  @ValidateIf(set)
  @IsString()
  @MaxLength(4096)
  backchannelLogoutUri?: string | null;

  @ApiPropertyOptional({
    enum: TOKEN_ENDPOINT_AUTH_METHODS,
    description:
      'none for a public client; client_secret_basic (default), client_secret_post or private_key_jwt (needs jwksUri) for a confidential one',
  })
  @ValidateIf(given)
  @IsString()
  @MaxLength(100)
  tokenEndpointAuthMethod?: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: 'https://backend.acme.example/.well-known/jwks.json',
    description: 'The client’s public keys, for private_key_jwt; the webhooks’ address rules apply',
  })
  @ValidateIf(set)
  @IsString()
  @MaxLength(4096)
  jwksUri?: string | null;

  @ApiPropertyOptional({ type: Number, nullable: true, ...TTL, description: 'Null: the resource’s, else the realm’s' })
  @ValidateIf(set)
  @IsInt()
  accessTokenTtlSeconds?: number | null;

  @ApiPropertyOptional({ enum: ID_TOKEN_ALGORITHMS, default: 'RS256' })
  @ValidateIf(given)
  @IsString()
  @MaxLength(100)
  idTokenSignedResponseAlg?: string;
}

export class CreateClientDto extends ClientFields {
  @ApiProperty({ example: 'Acme Web', maxLength: 100 })
  @IsString()
  @MaxLength(1000)
  declare name: string;

  @ApiProperty({ enum: ['public', 'confidential'], description: 'public: a browser or native app (no secret); confidential: a backend' })
  @IsString()
  @MaxLength(100)
  type: string;
}

/** Any field but clientId and type (unknown fields are refused). */
export class UpdateClientDto extends ClientFields {}

export class ResourceScopeDto {
  @ApiProperty({ example: 'orders:read', pattern: '^[a-z][a-z0-9:._-]{0,63}$' })
  @IsString()
  @MaxLength(1000)
  name: string;

  @ApiPropertyOptional({ type: String, nullable: true, example: 'Read your orders', maxLength: 200 })
  @ValidateIf(set)
  @IsString()
  @MaxLength(1000)
  description?: string | null;
}

class ResourceFields {
  @ApiPropertyOptional({ example: 'Orders API', maxLength: 100 })
  @ValidateIf(given)
  @IsString()
  @MaxLength(1000)
  name?: string;

  @ApiPropertyOptional({ type: [ResourceScopeDto], maxItems: MAX_RESOURCE_SCOPES, description: 'The whole list' })
  @ValidateIf(given)
  @IsArray()
  @ArrayMaxSize(1000)
  @ValidateNested({ each: true })
  @Type(() => ResourceScopeDto)
  scopes?: ResourceScopeDto[];

  @ApiPropertyOptional({ type: Number, nullable: true, ...TTL, description: 'Null: the realm’s' })
  @ValidateIf(set)
  @IsInt()
  accessTokenTtlSeconds?: number | null;
}

export class CreateResourceDto extends ResourceFields {
  @ApiProperty({
    example: 'https://api.acme.example',
    description: 'An absolute https URI (http on a loopback address), no fragment; never changes',
  })
  @IsString()
  @MaxLength(4096)
  identifier: string;

  @ApiProperty({ example: 'Orders API', maxLength: 100 })
  @IsString()
  @MaxLength(1000)
  declare name: string;
}

/** name, scopes or accessTokenTtlSeconds (the identifier never changes). */
export class UpdateResourceDto extends ResourceFields {}

export class CreateInitialAccessTokenDto {
  @ApiPropertyOptional({
    minimum: INITIAL_ACCESS_TOKEN_TTL.min,
    maximum: INITIAL_ACCESS_TOKEN_TTL.max,
    default: INITIAL_ACCESS_TOKEN_TTL.default,
  })
  @ValidateIf(given)
  @IsInt()
  expiresInSeconds?: number;
}
