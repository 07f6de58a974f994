import { Client } from '../../domain/client/client';
import { Resource } from '../../domain/client/resource';

/** HTTP shapes of clients and resources, whitelisted field by field (a secret's hash never leaves). */
export const presentClients = {
  client(client: Client) {
    return {
      clientId: client.clientId,
      name: client.name,
      type: client.type,
      redirectUris: client.redirectUris,
      postLogoutRedirectUris: client.postLogoutRedirectUris,
      grantTypes: client.grantTypes,
      scopes: client.scopes,
      resources: client.resources,
      firstParty: client.firstParty,
      backchannelLogoutUri: client.backchannelLogoutUri,
      tokenEndpointAuthMethod: client.tokenEndpointAuthMethod,
      jwksUri: client.jwksUri,
      accessTokenTtlSeconds: client.accessTokenTtlSeconds,
      idTokenSignedResponseAlg: client.idTokenSignedResponseAlg,
      registeredBy: client.registeredBy,
      createdAt: client.createdAt.toISOString(),
      updatedAt: client.updatedAt.toISOString(),
    };
  },

  resource(resource: Resource) {
    return {
      id: resource.id,
      identifier: resource.identifier,
      name: resource.name,
      scopes: resource.scopes.map(({ name, description }) => ({ name, description })),
      accessTokenTtlSeconds: resource.accessTokenTtlSeconds,
      createdAt: resource.createdAt.toISOString(),
      updatedAt: resource.updatedAt.toISOString(),
    };
  },
};
