import { IdentityProvider } from '../../domain/federation/identity-provider';
import { LinkedIdentity } from '../../domain/federation/linked-identity';
import { federationRedirectUri } from '../../application/federation/federation-flow';

/** HTTP shapes of federation, whitelisted field by field (a provider's secret never leaves). */
export const presentFederation = {
  provider(provider: IdentityProvider, apiUrl: string) {
    return {
      alias: provider.alias,
      displayName: provider.displayName,
      issuer: provider.issuer,
      clientId: provider.clientId,
      scopes: provider.scopes,
      enabled: provider.enabled,
      trustEmailVerified: provider.trustEmailVerified,
      hasClientSecret: provider.hasClientSecret,
      redirectUri: federationRedirectUri(apiUrl, provider.alias),
      createdAt: provider.createdAt.toISOString(),
      updatedAt: provider.updatedAt.toISOString(),
    };
  },

  identity(identity: LinkedIdentity) {
    return {
      id: identity.id,
      provider: identity.provider,
      subject: identity.subject,
      email: identity.email,
      linkedAt: identity.linkedAt.toISOString(),
      lastUsedAt: identity.lastUsedAt ? identity.lastUsedAt.toISOString() : null,
    };
  },
};
