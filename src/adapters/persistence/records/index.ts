import { AuditEventRecord } from './audit-event.record';
import { ClientRecord, InitialAccessTokenRecord, ResourceRecord } from './client.records';
import { EmailOutboxRecord } from './email-outbox.record';
import { FederationTokenRecord, IdentityProviderRecord, UserIdentityRecord } from './federation.records';
import { RecoveryCodeRecord, TotpCredentialRecord, WebauthnCredentialRecord } from './mfa.records';
import { OneTimeTokenRecord } from './one-time-token.record';
import {
  OrganizationDomainRecord,
  OrganizationInvitationRecord,
  OrganizationMemberRecord,
  OrganizationRecord,
} from './organization.records';
import { RealmRecord } from './realm.record';
import { RefreshTokenRecord } from './refresh-token.record';
import { RoleRecord } from './role.record';
import { ServerSecretRecord } from './server-secret.record';
import { SessionRecord } from './session.record';
import { IdTokenKeyRecord, SigningKeyRecord } from './signing-key.record';
import { UserRecord } from './user.record';
import { WebhookDeliveryRecord, WebhookRecord } from './webhook.records';

/** Every record class, listed explicitly for the data source (no globs). */
export const RECORDS = [
  RealmRecord,
  UserRecord,
  SessionRecord,
  RefreshTokenRecord,
  OneTimeTokenRecord,
  AuditEventRecord,
  EmailOutboxRecord,
  SigningKeyRecord,
  IdTokenKeyRecord,
  ServerSecretRecord,
  TotpCredentialRecord,
  WebauthnCredentialRecord,
  RecoveryCodeRecord,
  WebhookRecord,
  WebhookDeliveryRecord,
  IdentityProviderRecord,
  UserIdentityRecord,
  FederationTokenRecord,
  RoleRecord,
  ClientRecord,
  ResourceRecord,
  InitialAccessTokenRecord,
  OrganizationRecord,
  OrganizationDomainRecord,
  OrganizationMemberRecord,
  OrganizationInvitationRecord,
];
