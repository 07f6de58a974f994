import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsBoolean, IsOptional, IsString, MaxLength, ValidateIf } from 'class-validator';
import { MAX_ORGANIZATION_DOMAINS } from '../../../domain/organization/organization';
import { PageQuery } from './admin.dto';

// The forms of the fields are the domain's (src/domain/organization), which names the field it
// refuses; these decorators check types and sizes only. An absent field is unchanged.
const given = (_o: object, value: unknown) => value !== undefined;
const MAX_ROLES = 50;

class OrganizationFields {
  @ApiPropertyOptional({ type: [String], maxItems: MAX_ORGANIZATION_DOMAINS, example: ['acme.example'] })
  @ValidateIf(given)
  @IsArray()
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  @MaxLength(253, { each: true })
  domains?: string[];

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: null,
    description: 'Alias of one of the realm’s identity providers, or null',
  })
  @ValidateIf((_o, value) => value !== undefined && value !== null)
  @IsString()
  @MaxLength(64)
  identityProvider?: string | null;

  @ApiPropertyOptional({ example: false, description: 'Addresses of its domains sign in only through identityProvider (which it needs)' })
  @ValidateIf(given)
  @IsBoolean()
  requireIdentityProvider?: boolean;
}

export class CreateOrganizationDto extends OrganizationFields {
  @ApiProperty({ example: 'Acme Corporation', maxLength: 100 })
  @IsString()
  @MaxLength(1000)
  name: string;

  @ApiProperty({ example: 'acme', pattern: '^[a-z0-9][a-z0-9-]{0,62}$' })
  @IsString()
  @MaxLength(63)
  slug: string;
}

export class UpdateOrganizationDto extends OrganizationFields {
  @ApiPropertyOptional({ example: 'Acme Corporation', maxLength: 100 })
  @ValidateIf(given)
  @IsString()
  @MaxLength(1000)
  name?: string;

  @ApiPropertyOptional({ example: 'acme', pattern: '^[a-z0-9][a-z0-9-]{0,62}$' })
  @ValidateIf(given)
  @IsString()
  @MaxLength(63)
  slug?: string;
}

export class ListOrganizationsQuery extends PageQuery {
  @ApiPropertyOptional({ description: 'Case-insensitive substring of the name or the slug' })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  search?: string;
}

export class MemberRolesDto {
  @ApiProperty({ type: [String], example: ['org-admin'], description: '`org-admin` and the realm’s defined roles' })
  @IsArray()
  @ArrayMaxSize(MAX_ROLES)
  @IsString({ each: true })
  @MaxLength(64, { each: true })
  roles: string[];
}

export class CreateInvitationDto extends MemberRolesDto {
  @ApiProperty({ example: 'bob@acme.example' })
  @IsString()
  @MaxLength(1000)
  email: string;
}

export class AcceptInvitationDto {
  @ApiProperty({ description: 'The token of the invitation’s link' })
  @IsString()
  @MaxLength(512)
  token: string;
}

export class ActiveOrganizationDto {
  @ApiProperty({ type: String, nullable: true, example: '0192f1c4-7a2b-7c3d-8e4f-5a6b7c8d9e0f', description: 'null for none' })
  @ValidateIf((_o, value) => value !== null)
  @IsString()
  @MaxLength(64)
  organizationId: string | null;
}
