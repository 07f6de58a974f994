import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

const AT = { example: '2026-11-25T21:44:00.000Z', format: 'date-time' };

export class ProviderButtonView {
  @ApiProperty({ example: 'acme' }) alias: string;
  @ApiProperty({ example: 'Acme SSO' }) displayName: string;
}

export class DiscoveredOrganizationView {
  @ApiProperty({ example: '0192f1c4-7a2b-7c3d-8e4f-5a6b7c8d9e0f' }) id: string;
  @ApiProperty({ example: 'Acme Corporation' }) name: string;
  @ApiProperty({ example: 'acme' }) slug: string;
  @ApiProperty({ type: String, nullable: true, example: 'acme', description: 'The alias to start the sign-in with, or null' })
  identityProvider: string | null;
}

export class ProvidersResponse {
  @ApiProperty({ type: [ProviderButtonView] }) providers: ProviderButtonView[];
  @ApiPropertyOptional({
    type: DiscoveredOrganizationView,
    nullable: true,
    description: 'With ?email=: the organization whose domain the address is of (home-realm discovery), else null',
  })
  organization?: DiscoveredOrganizationView | null;
}

export class AuthorizationUrlResponse {
  @ApiProperty({ example: 'https://login.acme.example/authorize?response_type=code&client_id=…', description: 'Send the browser there' })
  authorizationUrl: string;
}

export class IdentityView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: 'acme' }) provider: string;
  @ApiProperty({ example: '248289761001', description: 'The provider’s sub' }) subject: string;
  @ApiProperty({ type: String, nullable: true, example: 'alice@example.com' }) email: string | null;
  @ApiProperty(AT) linkedAt: string;
  @ApiProperty({ ...AT, type: String, nullable: true }) lastUsedAt: string | null;
}

export class IdentityResponse {
  @ApiProperty({ type: IdentityView }) identity: IdentityView;
}

export class IdentitiesResponse {
  @ApiProperty({ type: [IdentityView] }) identities: IdentityView[];
}

export class IdentityProviderView {
  @ApiProperty({ example: 'acme', pattern: '^[a-z0-9][a-z0-9-]{0,62}$' }) alias: string;
  @ApiProperty({ example: 'Acme SSO' }) displayName: string;
  @ApiProperty({ example: 'https://login.acme.example' }) issuer: string;
  @ApiProperty({ example: 'identity-service' }) clientId: string;
  @ApiProperty({ type: [String], example: ['openid', 'email', 'profile'] }) scopes: string[];
  @ApiProperty({ example: true }) enabled: boolean;
  @ApiProperty({ example: true }) trustEmailVerified: boolean;
  @ApiProperty({ example: true, description: 'The secret itself is stored encrypted and never returned' }) hasClientSecret: boolean;
  @ApiProperty({ example: 'https://id.example.com/api/v1/auth/federation/acme/callback', description: 'Register it at the provider' })
  redirectUri: string;
  @ApiProperty(AT) createdAt: string;
  @ApiProperty(AT) updatedAt: string;
}

export class IdentityProviderResponse {
  @ApiProperty({ type: IdentityProviderView }) identityProvider: IdentityProviderView;
}

export class IdentityProvidersResponse {
  @ApiProperty({ type: [IdentityProviderView] }) identityProviders: IdentityProviderView[];
}
