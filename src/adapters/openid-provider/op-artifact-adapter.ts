import { OpClient, OpClients } from '../../application/ports/op-clients';
import { OpPayload, TypeOrmOpArtifacts } from '../persistence/typeorm-op-artifacts';

/** The Adapter interface of oidc-provider: one instance per model (Session, Grant, AccessToken…). */
export interface OpAdapter {
  upsert(id: string, payload: OpPayload, expiresIn?: number): Promise<void>;
  find(id: string): Promise<OpPayload | undefined>;
  findByUid(uid: string): Promise<OpPayload | undefined>;
  findByUserCode(userCode: string): Promise<OpPayload | undefined>;
  consume(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
  revokeByGrantId(grantId: string): Promise<void>;
}

/** The OpenID scopes every realm offers; a resource's scopes come with the resource. */
export const OP_SCOPES = ['openid', 'profile', 'email', 'offline_access', 'roles'];

const LOOPBACK = /^http:\/\/(127\.0\.0\.1|\[::1\])(:\d+)?\//;
const PRIVATE_USE = /^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]*:/;

/**
 * The client as the library reads it (its metadata names). A client whose redirects are loopback
 * or private-use addresses is a native app: the library then matches a loopback redirect on any
 * port (RFC 8252 §7.3), and only those.
 */
export function clientMetadata(client: OpClient): OpPayload {
  const authorizationCode = client.grantTypes.includes('authorization_code');
  const openidScopes = client.scopes.filter((scope) => OP_SCOPES.includes(scope));
  const native = client.redirectUris.length > 0 && client.redirectUris.every((uri) => LOOPBACK.test(uri) || PRIVATE_USE.test(uri));
  return {
    client_id: client.clientId,
    client_name: client.name,
    ...(client.clientSecretHash ? { client_secret: client.clientSecretHash } : {}),
    application_type: native ? 'native' : 'web',
    redirect_uris: authorizationCode ? client.redirectUris : [],
    post_logout_redirect_uris: client.postLogoutRedirectUris,
    grant_types: client.grantTypes,
    response_types: authorizationCode ? ['code'] : [],
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    ...(client.jwksUri ? { jwks_uri: client.jwksUri } : {}),
    // The OpenID scopes it may ask for; resource scopes are checked against its resources.
    ...(openidScopes.length ? { scope: openidScopes.join(' ') } : {}),
    id_token_signed_response_alg: client.idTokenSignedResponseAlg,
    ...(client.backchannelLogoutUri
      ? { backchannel_logout_uri: client.backchannelLogoutUri, backchannel_logout_session_required: true }
      : {}),
    first_party: client.firstParty,
    resources: client.resources,
    ...(client.accessTokenTtlSeconds ? { access_token_ttl: client.accessTokenTtlSeconds } : {}),
  };
}

/**
 * The Adapter class of one realm's provider: its artifacts in `op_artifacts` under the realm's id,
 * its clients from OpClients (never stored by the library).
 */
export function opAdapterFor(realmId: string, store: TypeOrmOpArtifacts, clients: OpClients): new (model: string) => OpAdapter {
  return class RealmOpAdapter implements OpAdapter {
    constructor(private readonly model: string) {}

    async upsert(id: string, payload: OpPayload, expiresIn?: number): Promise<void> {
      if (this.model === 'Client') throw new Error('Clients are registered through the admin API');
      await store.upsert(realmId, this.model, id, payload, expiresIn);
    }

    async find(id: string): Promise<OpPayload | undefined> {
      if (this.model === 'Client') {
        const client = await clients.find(realmId, id);
        return client ? clientMetadata(client) : undefined;
      }
      return store.find(realmId, this.model, id);
    }

    findByUid(uid: string): Promise<OpPayload | undefined> {
      return store.findByUid(realmId, this.model, uid);
    }

    findByUserCode(userCode: string): Promise<OpPayload | undefined> {
      return store.findByUserCode(realmId, this.model, userCode);
    }

    consume(id: string): Promise<void> {
      return store.consume(realmId, this.model, id);
    }

    destroy(id: string): Promise<void> {
      return store.destroy(realmId, this.model, id);
    }

    revokeByGrantId(grantId: string): Promise<void> {
      return store.revokeByGrantId(realmId, grantId);
    }
  };
}
