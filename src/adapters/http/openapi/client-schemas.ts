import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  CLIENT_ACCESS_TOKEN_TTL,
  GRANT_TYPES,
  ID_TOKEN_ALGORITHMS,
  TOKEN_ENDPOINT_AUTH_METHODS,
} from '../../../domain/client/client-rules';

const AT = { example: '2026-11-25T21:44:00.000Z', format: 'date-time' };
const TTL = { minimum: CLIENT_ACCESS_TOKEN_TTL.min, maximum: CLIENT_ACCESS_TOKEN_TTL.max };
const SECRET = {
  example: 'Zm9yIHRoZSBleGFtcGxlIG9ubHk6IG5vdCBhIHNlY3JldCBhdCBhbGw',
  description: 'Shown this once (256 random bits); the service keeps only its hash',
};

export class ClientView {
  @ApiProperty({ example: 'q3ZJb9u0S7mVd2xYc1rT8wKp4nLfA6eHgE5iB0oN_jU', description: 'Generated: 256 random bits, URL-safe' })
  clientId: string;
  @ApiProperty({ example: 'Acme Web' }) name: string;
  @ApiProperty({ enum: ['public', 'confidential'], example: 'public' }) type: string;
  @ApiProperty({ type: [String], example: ['https://app.acme.example/callback'] }) redirectUris: string[];
  @ApiProperty({ type: [String], example: ['https://app.acme.example/'] }) postLogoutRedirectUris: string[];
  @ApiProperty({ type: [String], enum: GRANT_TYPES, example: ['authorization_code', 'refresh_token'] }) grantTypes: string[];
  @ApiProperty({ type: [String], example: ['openid', 'profile', 'email', 'offline_access', 'roles'] }) scopes: string[];
  @ApiProperty({ type: [String], example: ['https://api.acme.example'], description: 'Identifiers of the realm’s resources' })
  resources: string[];
  @ApiProperty({ example: false }) firstParty: boolean;
  @ApiProperty({ type: String, nullable: true, example: null }) backchannelLogoutUri: string | null;
  @ApiProperty({ enum: TOKEN_ENDPOINT_AUTH_METHODS, example: 'none' }) tokenEndpointAuthMethod: string;
  @ApiProperty({ type: String, nullable: true, example: null }) jwksUri: string | null;
  @ApiProperty({ type: Number, nullable: true, ...TTL, example: null }) accessTokenTtlSeconds: number | null;
  @ApiProperty({ enum: ID_TOKEN_ALGORITHMS, example: 'RS256' }) idTokenSignedResponseAlg: string;
  @ApiProperty({ enum: ['admin', 'dynamic'], example: 'admin' }) registeredBy: string;
  @ApiProperty(AT) createdAt: string;
  @ApiProperty(AT) updatedAt: string;
}

export class ClientResponse {
  @ApiProperty({ type: ClientView }) client: ClientView;
}

export class ClientsResponse {
  @ApiProperty({ type: [ClientView] }) clients: ClientView[];
}

export class CreatedClientResponse {
  @ApiProperty({ type: ClientView }) client: ClientView;
  @ApiPropertyOptional({ ...SECRET, description: `A confidential client’s secret. ${SECRET.description}` }) clientSecret?: string;
}

export class RotatedClientSecretResponse {
  @ApiProperty({ type: ClientView }) client: ClientView;
  @ApiProperty({ ...SECRET, description: `The new secret; the old one no longer works. ${SECRET.description}` }) clientSecret: string;
}

export class ResourceScopeView {
  @ApiProperty({ example: 'orders:read', pattern: '^[a-z][a-z0-9:._-]{0,63}$' }) name: string;
  @ApiProperty({ example: 'Read your orders' }) description: string;
}

export class ResourceView {
  @ApiProperty({ format: 'uuid', example: '0b7e3c1a-5d2f-4f4e-9a77-3c2d1e0f9a8b' }) id: string;
  @ApiProperty({ example: 'https://api.acme.example', description: 'The aud of its access tokens' }) identifier: string;
  @ApiProperty({ example: 'Orders API' }) name: string;
  @ApiProperty({ type: [ResourceScopeView] }) scopes: ResourceScopeView[];
  @ApiProperty({ type: Number, nullable: true, ...TTL, example: 600 }) accessTokenTtlSeconds: number | null;
  @ApiProperty(AT) createdAt: string;
  @ApiProperty(AT) updatedAt: string;
}

export class ResourceResponse {
  @ApiProperty({ type: ResourceView }) resource: ResourceView;
}

export class ResourcesResponse {
  @ApiProperty({ type: [ResourceView] }) resources: ResourceView[];
}

export class InitialAccessTokenResponse {
  @ApiProperty({
    example: 'h2Vq9cT1mZ0rXb7Ly4sN8kJw3fA6dE5gU1iO0pQ_aBc',
    description: 'Shown this once; allows one dynamic client registration (RFC 7591), as a bearer token',
  })
  initialAccessToken: string;
  @ApiProperty(AT) expiresAt: string;
}
