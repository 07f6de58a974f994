import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsEmail,
  IsIn,
  IsInt,
  IsISO8601,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import type { UserSort } from '../../../application/ports/user.repository';
import { AUDIT_EVENT_TYPES, type AuditEventType } from '../../../domain/audit/audit-event';
import type { SessionStatus } from '../../../domain/session/session';
import type { UserStatus } from '../../../domain/user/user';
import { ROLE_NAME } from '../../../domain/role/role-names';
import { TrimString } from './auth.dto';

const ROLE_MESSAGE = { each: true, message: 'each role must match ^[a-z][a-z0-9:._-]{0,63}$' };
const USER_STATUSES: UserStatus[] = ['active', 'suspended', 'locked'];
const SESSION_STATUSES: SessionStatus[] = ['active', 'flagged'];
const USER_SORTS: UserSort[] = ['createdAt', '-createdAt', 'email', '-email', 'lastLoginAt', '-lastLoginAt'];
export { AUDIT_EVENT_TYPES };

/** `page` (1-based) and `limit` (1–100) of every list. */
export class PageQuery {
  @ApiPropertyOptional({ minimum: 1, default: 1 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  page?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: 100, default: 20 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;
}

export class ListUsersQuery extends PageQuery {
  @ApiPropertyOptional({ description: 'Case-insensitive substring of the email or the name' })
  @IsOptional()
  @IsString()
  @MaxLength(254)
  search?: string;

  @ApiPropertyOptional({ enum: USER_STATUSES })
  @IsOptional()
  @IsIn(USER_STATUSES)
  status?: UserStatus;

  @ApiPropertyOptional({ enum: ['true', 'false'] })
  @IsOptional()
  @IsIn(['true', 'false'])
  emailVerified?: 'true' | 'false';

  @ApiPropertyOptional({ enum: USER_SORTS, default: '-createdAt' })
  @IsOptional()
  @IsIn(USER_SORTS)
  sort?: UserSort;
}

export class ListSessionsQuery extends PageQuery {
  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(64)
  userId?: string;

  @ApiPropertyOptional({ enum: SESSION_STATUSES })
  @IsOptional()
  @IsIn(SESSION_STATUSES)
  status?: SessionStatus;
}

export class ListEventsQuery extends PageQuery {
  @ApiPropertyOptional({ enum: AUDIT_EVENT_TYPES })
  @IsOptional()
  @IsIn(AUDIT_EVENT_TYPES)
  type?: AuditEventType;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(64)
  userId?: string;

  @ApiPropertyOptional({ description: 'ISO 8601 timestamp; events at or after it' })
  @IsOptional()
  @IsISO8601({ strict: true })
  since?: string;
}

export class CreateUserDto {
  @ApiProperty({ example: 'bob@example.com', maxLength: 254 })
  @TrimString()
  @IsString()
  @MaxLength(254)
  @IsEmail()
  email: string;

  @ApiProperty({ example: 'Bob Builder', maxLength: 100 })
  @IsString()
  @MaxLength(1000)
  name: string;

  @ApiPropertyOptional({ description: 'Set it (policy applies); without it the user is emailed an invitation to choose one' })
  @IsOptional()
  @IsString()
  @MaxLength(4096)
  password?: string;

  @ApiPropertyOptional({ default: false })
  @IsOptional()
  @IsBoolean()
  emailVerified?: boolean;

  @ApiPropertyOptional({ type: [String], example: ['realm-admin'] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(32)
  @IsString({ each: true })
  @Matches(ROLE_NAME, ROLE_MESSAGE)
  roles?: string[];
}

export class SuspendUserDto {
  @ApiPropertyOptional({ maxLength: 500 })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  reason?: string;
}

export class ResetPasswordDto {
  @ApiPropertyOptional({ description: 'Set this password; without it a reset email is sent' })
  @IsOptional()
  @IsString()
  @MaxLength(4096)
  password?: string;
}

export class SetRolesDto {
  @ApiProperty({ type: [String], example: ['teacher'], description: 'Each built in or defined by the realm (POST /v1/admin/roles)' })
  @IsArray()
  @ArrayMaxSize(32)
  @IsString({ each: true })
  @Matches(ROLE_NAME, ROLE_MESSAGE)
  roles: string[];
}

export class SetAppMetadataDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { schoolId: 'north-42', plan: 'pro' },
    description: 'Replaces the metadata; `{}` clears it. At most 1 KiB serialised, at most 3 levels of objects or arrays below the top',
  })
  @IsObject()
  appMetadata: Record<string, unknown>;
}

export class CreateRoleDto {
  @ApiProperty({ example: 'teacher', pattern: '^[a-z][a-z0-9:._-]{0,63}$' })
  @IsString()
  @Matches(ROLE_NAME, { message: 'must match ^[a-z][a-z0-9:._-]{0,63}$' })
  name: string;

  @ApiPropertyOptional({ example: 'Grades the classes they teach', maxLength: 200 })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  description?: string;
}

export class CreateRealmDto {
  @ApiProperty({ example: 'acme', pattern: '^[a-z0-9][a-z0-9-]{0,62}$' })
  @IsString()
  @Matches(/^[a-z0-9][a-z0-9-]{0,62}$/, { message: 'must match ^[a-z0-9][a-z0-9-]{0,62}$' })
  id: string;

  @ApiProperty({ example: 'Acme Corporation', maxLength: 100 })
  @IsString()
  @MaxLength(1000)
  name: string;
}
