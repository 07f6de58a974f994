import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsObject, IsString, MaxLength, ValidateIf } from 'class-validator';
import { MAX_RETURN_URLS, MAX_WEBAUTHN_ORIGINS, SETTING_RANGES as R } from '../../../domain/realm/realm-settings';

const RESET = 'null returns it to the deployment default';

/** The members of `webauthn`, each optional and nullable (merged one by one). */
export class WebauthnSettingsPatchView {
  @ApiPropertyOptional({ type: String, nullable: true, example: 'app.example.com', description: `Relying party id: a domain; ${RESET}` })
  rpId?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 100, example: 'Example App' }) rpName?: string | null;
  @ApiPropertyOptional({
    type: [String],
    nullable: true,
    maxItems: MAX_WEBAUTHN_ORIGINS,
    example: ['https://app.example.com'],
    description: 'Accepted origins, each on the rpId domain',
  })
  origins?: string[] | null;
}

export class LockoutSettingsPatchView {
  @ApiPropertyOptional({ type: Number, nullable: true, minimum: R.lockoutMaxFailures.min, maximum: R.lockoutMaxFailures.max, example: 5 })
  maxFailures?: number | null;
  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: R.lockoutDurationSeconds.min,
    maximum: R.lockoutDurationSeconds.max,
    example: 900,
    description: '0: locked until an administrator unlocks',
  })
  durationSeconds?: number | null;
}

/** A settings change: every field optional; null returns it to the deployment default. */
export class RealmSettingsPatchView {
  @ApiPropertyOptional({ type: String, nullable: true, example: 'https://app.example.com', description: 'Base of the links in emails' })
  publicUrl?: string | null;
  @ApiPropertyOptional({ type: WebauthnSettingsPatchView, nullable: true }) webauthn?: WebauthnSettingsPatchView | null;
  @ApiPropertyOptional({ enum: ['open', 'closed'], nullable: true, description: 'Always closed in master' }) registration?: string | null;
  @ApiPropertyOptional({ type: Boolean, nullable: true }) requireVerifiedEmail?: boolean | null;
  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: R.accessTokenTtlSeconds.min,
    maximum: R.accessTokenTtlSeconds.max,
    example: 300,
  })
  accessTokenTtlSeconds?: number | null;
  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: R.sessionIdleTimeoutSeconds.min,
    maximum: R.sessionIdleTimeoutSeconds.max,
    description: 'At most sessionMaxLifetimeSeconds',
  })
  sessionIdleTimeoutSeconds?: number | null;
  @ApiPropertyOptional({ type: Number, nullable: true, minimum: R.sessionMaxLifetimeSeconds.min, maximum: R.sessionMaxLifetimeSeconds.max })
  sessionMaxLifetimeSeconds?: number | null;
  @ApiPropertyOptional({ type: LockoutSettingsPatchView, nullable: true }) lockout?: LockoutSettingsPatchView | null;
  @ApiPropertyOptional({ type: Number, nullable: true, minimum: R.passwordMinLength.min, maximum: R.passwordMinLength.max, example: 12 })
  passwordMinLength?: number | null;
  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: R.fingerprintMatchThreshold.min,
    maximum: R.fingerprintMatchThreshold.max,
    example: 0.8,
  })
  fingerprintMatchThreshold?: number | null;
  @ApiPropertyOptional({
    type: [String],
    nullable: true,
    maxItems: MAX_RETURN_URLS,
    example: ['https://app.example.com/auth/callback'],
    description: 'Exact return URLs for identity-provider and email-link sign-ins (absolute http(s), no fragment)',
  })
  allowedReturnUrls?: string[] | null;
  @ApiPropertyOptional({
    enum: ['closed', 'token', 'open'],
    nullable: true,
    description: 'Dynamic client registration: closed (the default), token (with an initial access token) or open',
  })
  clientRegistration?: string | null;
}

/** PATCH /v1/admin/realm. `settings` is checked field by field by the domain (unknown fields refused there). */
export class UpdateRealmDto {
  @ApiPropertyOptional({ example: 'Acme Corporation', maxLength: 100 })
  @ValidateIf((body: UpdateRealmDto) => body.name !== undefined)
  @IsString()
  @MaxLength(1000)
  name?: string;

  @ApiPropertyOptional({ description: 'false: sign-ins and the access tokens of the realm are refused; administration goes on' })
  @ValidateIf((body: UpdateRealmDto) => body.enabled !== undefined)
  @IsBoolean()
  enabled?: boolean;

  @ApiPropertyOptional({
    type: RealmSettingsPatchView,
    description: 'Merged field by field; null returns a field to the deployment default',
  })
  @ValidateIf((body: UpdateRealmDto) => body.settings !== undefined)
  @IsObject()
  settings?: Record<string, unknown>;
}
