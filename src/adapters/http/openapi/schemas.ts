import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { MAX_RETURN_URLS, SETTING_RANGES as R } from '../../../domain/realm/realm-settings';
import { AUDIT_EVENT_TYPES } from '../dto/admin.dto';
import { ERROR_STATUS } from '../errors/error-status';

/*
 * Response shapes for the OpenAPI document. They
 * describe what presenters.ts produces; nothing at run time uses them.
 */

const ID = { example: '0f8b5a52-3f0e-4a8e-9d55-2b8e0a3c7d11' };
const AT = { example: '2026-11-25T21:44:00.000Z', format: 'date-time' };
const MFA_METHODS = ['totp', 'webauthn'];

// ── errors ──────────────────────────────────────────────────────────────────────────

export class FieldErrorView {
  @ApiProperty({ example: 'email' }) field: string;
  @ApiProperty({ example: 'must be an email' }) message: string;
}

export class ErrorBodyView {
  @ApiProperty({ enum: Object.keys(ERROR_STATUS), example: 'VALIDATION_FAILED' }) code: string;
  @ApiProperty({ example: 'email must be an email' }) message: string;
  @ApiProperty({ example: 400, description: 'The HTTP status, repeated' }) status: number;
  @ApiPropertyOptional({ type: [FieldErrorView], description: 'Only on VALIDATION_FAILED' }) details?: FieldErrorView[];
  @ApiPropertyOptional({ description: 'Only on MFA_REQUIRED: verify it at POST /api/v1/auth/mfa/verify' }) mfaToken?: string;
}

export class ErrorEnvelope {
  @ApiProperty({ type: ErrorBodyView }) error: ErrorBodyView;
}

// ── authentication ──────────────────────────────────────────────────────────────────

export class RegisteredUserView {
  @ApiProperty(ID) id: string;
  @ApiProperty({ example: 'alice@example.com' }) email: string;
  @ApiProperty({ example: false }) emailVerified: boolean;
}

export class AuthUserView extends RegisteredUserView {
  @ApiProperty({ example: false }) mfaEnabled: boolean;
}

export class TokensView {
  @ApiProperty({
    description: 'ES256 JWT (typ at+jwt); verify with GET /.well-known/jwks.json',
    example: 'eyJhbGciOiJFUzI1NiIsInR5cCI6ImF0K2p3dCIsImtpZCI6Ii4uLiJ9.eyJzdWIiOiIuLi4ifQ.c2ln',
  })
  accessToken: string;
  @ApiPropertyOptional({
    description:
      'Opaque, single use: every refresh returns a new one. Absent when the request asked for the cookie transport ' +
      '(`X-Refresh-Token-Transport: cookie`): the token is then in the `__Host-refresh-<realmId>` cookie.',
    example: 'r1Q2kY0mJ8m8b1Vw3c5Zp7x9A0dE2fG4hJ6kL8mN0pQ',
  })
  refreshToken?: string;
  @ApiProperty({ example: 900, description: 'Access-token lifetime in seconds' }) expiresIn: number;
  @ApiProperty({
    enum: ['Bearer', 'DPoP'],
    example: 'Bearer',
    description: '`DPoP` for a session bound to a key: send `Authorization: DPoP <accessToken>` with a `DPoP` proof',
  })
  tokenType: string;
}

export class RegisterResponse {
  @ApiProperty({ type: RegisteredUserView }) user: RegisteredUserView;
  @ApiProperty({ example: 'Registration successful. Check your email to verify your address.' }) message: string;
}

export class LoginResponse {
  @ApiProperty({ type: AuthUserView }) user: AuthUserView;
  @ApiProperty({ type: TokensView, nullable: true, description: 'null when requiresMfa' }) tokens: TokensView | null;
  @ApiProperty({ example: false }) requiresMfa: boolean;
  @ApiPropertyOptional({ description: 'Only when requiresMfa: single use, valid 5 minutes, 5 wrong codes at most' }) mfaToken?: string;
  @ApiPropertyOptional({ enum: MFA_METHODS, isArray: true, description: 'Only when requiresMfa' }) mfaMethods?: string[];
}

export class TokensResponse {
  @ApiProperty({ type: TokensView }) tokens: TokensView;
}

export class AuthenticatedResponse {
  @ApiProperty({ type: AuthUserView }) user: AuthUserView;
  @ApiProperty({ type: TokensView }) tokens: TokensView;
}

export class SuccessResponse {
  @ApiProperty({ example: true }) success: boolean;
}

export class RevokedResponse extends SuccessResponse {
  @ApiProperty({ example: 2, description: 'How many sessions were revoked' }) revoked: number;
}

// ── users and sessions ──────────────────────────────────────────────────────────────────

export class ProfileView {
  @ApiProperty({ example: 'Alice' }) firstName: string;
  @ApiProperty({ example: 'Smith' }) lastName: string;
  @ApiProperty({ type: String, nullable: true, example: null }) avatar: string | null;
}

export class MfaView {
  @ApiProperty({ example: false }) enabled: boolean;
  @ApiProperty({ enum: MFA_METHODS, isArray: true, example: [] }) methods: string[];
}

export class LinkedIdentityView {
  @ApiProperty(ID) id: string;
  @ApiProperty({ example: 'google', description: 'The identity provider’s alias' }) provider: string;
  @ApiProperty({ type: String, nullable: true, example: 'alice@example.com', description: 'As the provider gave it at the last sign-in' })
  email: string | null;
  @ApiProperty(AT) linkedAt: string;
}

export class UserView {
  @ApiProperty(ID) id: string;
  @ApiProperty({ example: 'alice@example.com' }) email: string;
  @ApiProperty({ example: true }) emailVerified: boolean;
  @ApiProperty({ type: ProfileView }) profile: ProfileView;
  @ApiProperty({ type: MfaView }) mfa: MfaView;
  @ApiProperty({ enum: ['active', 'suspended', 'locked'], example: 'active' }) status: string;
  @ApiProperty({ type: [String], example: ['teacher'], description: 'Built-in roles and roles the realm defines' }) roles: string[];
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { schoolId: 'north-42' },
    description: 'Set by administrators only; in access tokens as `app_metadata` when not empty',
  })
  appMetadata: Record<string, unknown>;
  @ApiProperty({ example: true, description: 'False for accounts made by an identity provider or an email code until a password is set' })
  hasPassword: boolean;
  @ApiProperty({ type: [LinkedIdentityView], description: 'Linked identity-provider accounts' }) identities: LinkedIdentityView[];
  @ApiProperty(AT) createdAt: string;
  @ApiProperty({ ...AT, type: String, nullable: true }) lastLoginAt: string | null;
}

export class UserResponse {
  @ApiProperty({ type: UserView }) user: UserView;
}

export class DeviceView {
  @ApiProperty({ example: 'c2b7e0d4a1f3' }) id: string;
  @ApiProperty({ example: 'Chrome 131 on macOS' }) name: string;
  @ApiProperty({ enum: ['browser', 'mobile', 'desktop', 'api', 'unknown'], example: 'browser' }) type: string;
  @ApiProperty({ type: String, nullable: true, description: 'As recorded at login' }) fingerprint: string | null;
}

export class LocationView {
  @ApiProperty({ type: String, nullable: true, example: 'FR' }) country: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'Paris' }) city: string | null;
}

export class SessionFlagView {
  @ApiProperty({ enum: ['fingerprint_mismatch'] }) reason: string;
  @ApiProperty({ example: 0.42, minimum: 0, maximum: 1 }) score: number;
  @ApiProperty(AT) flaggedAt: string;
}

export class SessionView {
  @ApiProperty(ID) id: string;
  @ApiProperty(ID) userId: string;
  @ApiProperty({ type: DeviceView }) device: DeviceView;
  @ApiProperty({ example: '203.0.113.7' }) ip: string;
  @ApiProperty({ type: LocationView }) location: LocationView;
  @ApiProperty({ enum: ['active', 'flagged'], example: 'active' }) status: string;
  @ApiProperty({
    example: false,
    description: 'The session is bound to a DPoP key (RFC 9449): its tokens work only with proofs made with it',
  })
  dpopBound: boolean;
  @ApiProperty({ type: SessionFlagView, nullable: true }) flag: SessionFlagView | null;
  @ApiProperty(AT) createdAt: string;
  @ApiProperty(AT) lastActiveAt: string;
  @ApiProperty(AT) expiresAt: string;
}

export class OwnSessionView extends SessionView {
  @ApiProperty({ example: true, description: 'The session of the access token used' }) current: boolean;
}

export class AppView {
  @ApiProperty({ example: 'q8Zy0mJ3xH2cV5tR1aW9eL' }) clientId: string;
  @ApiProperty({ example: 'Team Calendar' }) name: string;
  @ApiProperty({ example: ['openid', 'profile', 'email'], description: 'What the user allowed' }) scopes: string[];
  @ApiProperty({ example: '2026-11-25T12:00:00.000Z' }) grantedAt: string;
  @ApiProperty({ example: '2026-11-26T08:30:00.000Z', nullable: true, type: String }) lastUsedAt: string | null;
}

export class AppsResponse {
  @ApiProperty({ type: [AppView], description: 'The apps the user let sign them in through the realm (OpenID provider)' }) apps: AppView[];
}

export class OwnSessionsResponse {
  @ApiProperty({ type: [OwnSessionView] }) sessions: OwnSessionView[];
}

export class PaginationView {
  @ApiProperty({ example: 42 }) total: number;
  @ApiProperty({ example: 1 }) page: number;
  @ApiProperty({ example: 20 }) limit: number;
}

export class UsersPage {
  @ApiProperty({ type: [UserView] }) users: UserView[];
  @ApiProperty({ type: PaginationView }) pagination: PaginationView;
}

export class SessionsPage {
  @ApiProperty({ type: [SessionView] }) sessions: SessionView[];
  @ApiProperty({ type: PaginationView }) pagination: PaginationView;
}

export class AuditEventView {
  @ApiProperty(ID) id: string;
  @ApiProperty({ enum: AUDIT_EVENT_TYPES, example: 'login.succeeded' }) type: string;
  @ApiProperty({ example: 'default' }) realmId: string;
  @ApiProperty({ type: String, nullable: true }) userId: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'The acting admin, for admin actions' }) actorId: string | null;
  @ApiProperty({ type: String, nullable: true }) sessionId: string | null;
  @ApiProperty({ type: String, nullable: true, example: '203.0.113.7' }) ip: string | null;
  @ApiProperty(AT) at: string;
  @ApiProperty({ type: 'object', additionalProperties: true, example: { amr: ['pwd'] } }) details: Record<string, unknown>;
}

export class EventsPage {
  @ApiProperty({ type: [AuditEventView] }) events: AuditEventView[];
  @ApiProperty({ type: PaginationView }) pagination: PaginationView;
}

export class PasswordResetResult extends SuccessResponse {
  @ApiProperty({ enum: ['set', 'email'], description: 'set: the given password was set; email: a reset link was sent' }) method: string;
}

export class WebauthnSettingsView {
  @ApiProperty({ example: 'app.example.com', description: 'Relying party id' }) rpId: string;
  @ApiProperty({ example: 'Example App' }) rpName: string;
  @ApiProperty({ type: [String], example: ['https://app.example.com'] }) origins: string[];
}

export class LockoutSettingsView {
  @ApiProperty({ example: 10, minimum: R.lockoutMaxFailures.min, maximum: R.lockoutMaxFailures.max }) maxFailures: number;
  @ApiProperty({ example: 900, minimum: R.lockoutDurationSeconds.min, maximum: R.lockoutDurationSeconds.max }) durationSeconds: number;
}

/** Every setting with the value in force (the realm's own, or the deployment default). */
export class RealmSettingsView {
  @ApiProperty({ example: 'https://app.example.com', description: 'Base of the links in this realm’s emails' }) publicUrl: string;
  @ApiProperty({ type: WebauthnSettingsView }) webauthn: WebauthnSettingsView;
  @ApiProperty({ enum: ['open', 'closed'], example: 'open' }) registration: string;
  @ApiProperty({ example: false }) requireVerifiedEmail: boolean;
  @ApiProperty({ example: 900, minimum: R.accessTokenTtlSeconds.min, maximum: R.accessTokenTtlSeconds.max }) accessTokenTtlSeconds: number;
  @ApiProperty({ example: 604800, minimum: R.sessionIdleTimeoutSeconds.min, maximum: R.sessionIdleTimeoutSeconds.max })
  sessionIdleTimeoutSeconds: number;
  @ApiProperty({ example: 2592000, minimum: R.sessionMaxLifetimeSeconds.min, maximum: R.sessionMaxLifetimeSeconds.max })
  sessionMaxLifetimeSeconds: number;
  @ApiProperty({ type: LockoutSettingsView }) lockout: LockoutSettingsView;
  @ApiProperty({ example: 8, minimum: R.passwordMinLength.min, maximum: R.passwordMinLength.max }) passwordMinLength: number;
  @ApiProperty({ example: 0.7, minimum: R.fingerprintMatchThreshold.min, maximum: R.fingerprintMatchThreshold.max })
  fingerprintMatchThreshold: number;
  @ApiProperty({
    type: [String],
    maxItems: MAX_RETURN_URLS,
    example: ['https://app.example.com/auth/callback'],
    description:
      'Where a sign-in with an identity provider or an email link may send the browser back (exact match; the console’s pages are always allowed)',
  })
  allowedReturnUrls: string[];
  @ApiProperty({
    enum: ['closed', 'token', 'open'],
    example: 'closed',
    description:
      'Dynamic client registration at the realm’s OpenID provider: closed (none), token (with an initial access token), open (anyone; public clients only)',
  })
  clientRegistration: string;
}

export class RealmView {
  @ApiProperty({ example: 'acme', pattern: '^[a-z0-9][a-z0-9-]{0,62}$' }) id: string;
  @ApiProperty({ example: 'Acme Corp' }) name: string;
  @ApiProperty({ example: true, description: 'false: sign-ins and the realm’s access tokens are refused' }) enabled: boolean;
  @ApiProperty({ type: RealmSettingsView }) settings: RealmSettingsView;
  @ApiProperty(AT) createdAt: string;
  @ApiProperty(AT) updatedAt: string;
}

export class RealmResponse {
  @ApiProperty({ type: RealmView }) realm: RealmView;
}

export class RealmsResponse {
  @ApiProperty({ type: [RealmView] }) realms: RealmView[];
}

// ── MFA ─────────────────────────────────────────────────────────────────────────

export class WebauthnCredentialView {
  @ApiProperty({ example: 'hK3b9…base64url' }) id: string;
  @ApiProperty({ example: 'YubiKey 5C' }) name: string;
  @ApiProperty({ example: false, description: 'A passkey: it signs in on its own, without a password' }) passkey: boolean;
  @ApiProperty({
    example: false,
    description:
      'Disabled because its signature counter went back (a copy of the key may exist): it no longer signs in, ' +
      'until it is removed and registered again',
  })
  disabled: boolean;
  @ApiProperty(AT) createdAt: string;
  @ApiProperty({ ...AT, type: String, nullable: true }) lastUsedAt: string | null;
}

export class CreatedCredentialView {
  @ApiProperty({ example: 'hK3b9…base64url' }) id: string;
  @ApiProperty({ example: 'YubiKey 5C' }) name: string;
  @ApiProperty(AT) createdAt: string;
}

export class MfaStatusResponse {
  @ApiProperty({ example: true }) enabled: boolean;
  @ApiProperty({ enum: MFA_METHODS, isArray: true, example: ['totp'] }) methods: string[];
  @ApiProperty({ type: [WebauthnCredentialView] }) webauthnCredentials: WebauthnCredentialView[];
  @ApiProperty({ example: 10 }) recoveryCodesRemaining: number;
}

export class TotpSetupResponse {
  @ApiProperty({ example: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP', description: 'base32; shown once, pending until confirmed' }) secret: string;
  @ApiProperty({ example: 'otpauth://totp/Identity%20Service:alice%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=Identity%20Service' })
  otpauthUrl: string;
  @ApiProperty({ example: 'data:image/png;base64,iVBORw0KGgo…', description: 'PNG data URL of the otpauth URL' }) qrCode: string;
}

export class MfaResponse {
  @ApiProperty({ type: MfaView }) mfa: MfaView;
}

export class MfaEnabledResponse extends MfaResponse {
  @ApiPropertyOptional({
    type: [String],
    description: '10 codes, shown once; only when this is the first method',
    example: ['7f3k-9q2m', '…'],
  })
  recoveryCodes?: string[];
}

export class WebauthnRegisteredResponse extends MfaEnabledResponse {
  @ApiProperty({ type: CreatedCredentialView }) credential: CreatedCredentialView;
}

export class RecoveryCodesResponse {
  @ApiProperty({ type: [String], description: '10 new codes; the old ones stop working', example: ['7f3k-9q2m', '…'] })
  recoveryCodes: string[];
}

export class PublicKeyCredentialRequestOptionsView {
  @ApiProperty({ description: 'base64url', example: 'Zm9vYmFyYmF6cXV4' }) challenge: string;
  @ApiPropertyOptional({ example: 60000 }) timeout?: number;
  @ApiPropertyOptional({ example: 'localhost' }) rpId?: string;
  @ApiPropertyOptional({ type: 'array', items: { type: 'object', additionalProperties: true } }) allowCredentials?: object[];
  @ApiPropertyOptional({ enum: ['required', 'preferred', 'discouraged'] }) userVerification?: string;
}

export class PasskeyOptionsResponse {
  @ApiProperty({ description: 'Names the challenge at POST /passkeys/verify; single use, valid 5 minutes' }) challengeId: string;
  @ApiProperty({ type: PublicKeyCredentialRequestOptionsView, description: 'Empty allowCredentials, userVerification "required"' })
  options: PublicKeyCredentialRequestOptionsView;
}

export class PublicKeyCredentialCreationOptionsView {
  @ApiProperty({ description: 'base64url', example: 'Zm9vYmFyYmF6cXV4' }) challenge: string;
  @ApiProperty({ type: 'object', additionalProperties: true, example: { id: 'localhost', name: 'Identity Service' } }) rp: object;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { id: 'base64url', name: 'alice@example.com', displayName: 'alice@example.com' },
  })
  user: object;
  @ApiProperty({ type: 'array', items: { type: 'object', additionalProperties: true }, example: [{ type: 'public-key', alg: -7 }] })
  pubKeyCredParams: object[];
  @ApiPropertyOptional({ example: 60000 }) timeout?: number;
  @ApiPropertyOptional({ type: 'array', items: { type: 'object', additionalProperties: true } }) excludeCredentials?: object[];
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) authenticatorSelection?: object;
  @ApiPropertyOptional({ example: 'none' }) attestation?: string;
}

// ── keys and operations ──────────────────────────────────────────────────────────

export class JwkView {
  @ApiProperty({ example: 'EC' }) kty: string;
  @ApiProperty({ example: 'P-256' }) crv: string;
  @ApiProperty({ example: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU' }) x: string;
  @ApiProperty({ example: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0' }) y: string;
  @ApiProperty(ID) kid: string;
  @ApiProperty({ example: 'ES256' }) alg: string;
  @ApiProperty({ example: 'sig' }) use: string;
}

export class JwksResponse {
  @ApiProperty({ type: [JwkView], description: 'The current key first, then the previous one' }) keys: JwkView[];
}

export class LiveResponse {
  @ApiProperty({ example: 'ok' }) status: string;
}

export class ReadinessCheckView {
  @ApiProperty({ example: true }) ok: boolean;
  @ApiPropertyOptional({ oneOf: [{ type: 'string' }, { type: 'number' }], example: 'applied' }) detail?: string | number;
}

export class ReadyResponse {
  @ApiProperty({ enum: ['ok', 'unavailable'], example: 'ok' }) status: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: { $ref: '#/components/schemas/ReadinessCheckView' },
    example: { database: { ok: true }, migrations: { ok: true, detail: 'applied' } },
  })
  checks: Record<string, ReadinessCheckView>;
}

/** Every class above, registered with the document even where no decorator names it. */
export const RESPONSE_SCHEMAS = [
  ErrorEnvelope,
  ReadinessCheckView,
  RegisterResponse,
  LoginResponse,
  TokensResponse,
  AuthenticatedResponse,
  SuccessResponse,
  RevokedResponse,
  UserResponse,
  OwnSessionsResponse,
  AppsResponse,
  UsersPage,
  SessionsPage,
  EventsPage,
  PasswordResetResult,
  RealmResponse,
  RealmsResponse,
  MfaStatusResponse,
  TotpSetupResponse,
  MfaResponse,
  MfaEnabledResponse,
  WebauthnRegisteredResponse,
  RecoveryCodesResponse,
  PublicKeyCredentialRequestOptionsView,
  PasskeyOptionsResponse,
  PublicKeyCredentialCreationOptionsView,
  JwksResponse,
  LiveResponse,
  ReadyResponse,
];

/** The two shapes of a successful login. */
export const LOGIN_EXAMPLES = {
  tokens: {
    summary: 'No MFA: a token pair',
    value: {
      user: { id: '0f8b5a52-3f0e-4a8e-9d55-2b8e0a3c7d11', email: 'alice@example.com', emailVerified: true, mfaEnabled: false },
      tokens: {
        accessToken: 'eyJhbGciOiJFUzI1NiIsInR5cCI6ImF0K2p3dCJ9.eyJzdWIiOiIuLi4ifQ.c2ln',
        refreshToken: 'r1Q2kY0mJ8m8b1Vw3c5Zp7x9A0dE2fG4hJ6kL8mN0pQ',
        expiresIn: 900,
      },
      requiresMfa: false,
    },
  },
  mfa: {
    summary: 'MFA enabled: an mfaToken for POST /api/v1/auth/mfa/verify',
    value: {
      user: { id: '0f8b5a52-3f0e-4a8e-9d55-2b8e0a3c7d11', email: 'alice@example.com', emailVerified: true, mfaEnabled: true },
      tokens: null,
      requiresMfa: true,
      mfaToken: 'mQ3v8n1Yb0c2Xk7ZpL4sT9wE6rA5uJ1hG0fD3eC2bB8',
      mfaMethods: ['totp', 'webauthn'],
    },
  },
};

export const METRICS_EXAMPLE = `# HELP identity_logins_total Password logins by outcome (success, invalid_credentials, suspended, locked)
# TYPE identity_logins_total counter
identity_logins_total{outcome="success"} 42
`;

export class RoleView {
  @ApiProperty({ example: 'teacher', pattern: '^[a-z][a-z0-9:._-]{0,63}$' }) name: string;
  @ApiProperty({ type: String, nullable: true, example: 'Grades the classes they teach' }) description: string | null;
  @ApiProperty({ description: '`realm-admin` (every realm) and `super-admin` (master): neither defined nor deleted' }) builtIn: boolean;
  @ApiProperty({ ...AT, description: 'For a built-in role, the realm’s' }) createdAt: string;
}

export class RoleResponse {
  @ApiProperty({ type: RoleView }) role: RoleView;
}

export class RolesResponse {
  @ApiProperty({ type: [RoleView] }) roles: RoleView[];
}
