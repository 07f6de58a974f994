import { Injectable } from '@nestjs/common';
import { ClientRepository } from '../../application/ports/client.repository';
import { OpClient, OpClients } from '../../application/ports/op-clients';
import { ResourceRepository } from '../../application/ports/resource.repository';

/**
 * The realm's clients as the administrators registered them (`/v1/admin/clients`), in the shape
 * the provider reads: the secret as `sha256:` and its stored hash, the resources with their scopes.
 */
@Injectable()
export class RepositoryOpClients extends OpClients {
  constructor(
    private readonly clients: ClientRepository,
    private readonly resources: ResourceRepository,
  ) {
    super();
  }

  async find(realmId: string, clientId: string): Promise<OpClient | null> {
    const client = await this.clients.findById(realmId, clientId);
    if (!client) return null;
    const resources = client.resources.length > 0 ? await this.resources.findByIdentifiers(realmId, client.resources) : [];
    return {
      clientId: client.clientId,
      name: client.name,
      clientSecretHash: client.isConfidential && client.secretHash ? `sha256:${client.secretHash}` : null,
      redirectUris: client.redirectUris,
      postLogoutRedirectUris: client.postLogoutRedirectUris,
      grantTypes: client.grantTypes,
      tokenEndpointAuthMethod: client.tokenEndpointAuthMethod,
      jwksUri: client.jwksUri,
      scopes: client.scopes,
      idTokenSignedResponseAlg: client.idTokenSignedResponseAlg,
      backchannelLogoutUri: client.backchannelLogoutUri,
      firstParty: client.firstParty,
      accessTokenTtlSeconds: client.accessTokenTtlSeconds,
      resources: resources.map((resource) => ({
        identifier: resource.identifier,
        scopes: resource.scopes.map((scope) => scope.name),
        accessTokenTtlSeconds: resource.accessTokenTtlSeconds,
      })),
    };
  }
}
