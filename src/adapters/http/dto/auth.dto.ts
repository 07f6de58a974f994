import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsEmail, IsNotEmpty, IsOptional, IsString, MaxLength, ValidateIf } from 'class-validator';

/** Emails are normalised before validation: trimmed. */
export const TrimString = () => Transform(({ value }) => (typeof value === 'string' ? value.trim() : value));

export class RegisterDto {
  @ApiProperty({ example: 'alice@example.com', maxLength: 254 })
  @TrimString()
  @IsString()
  @MaxLength(254)
  @IsEmail()
  email: string;

  @ApiProperty({
    example: 'correct horse battery staple',
    minLength: 8,
    maxLength: 128,
    description: '8–128 Unicode code points after NFKC; not a common password',
  })
  @IsString()
  password: string;

  @ApiProperty({ example: 'Alice Smith', maxLength: 100 })
  @IsString()
  @IsNotEmpty()
  name: string;
}

export class LoginDto {
  @ApiProperty({ example: 'alice@example.com' })
  @IsString()
  @MaxLength(1024)
  email: string;

  @ApiProperty({ example: 'correct horse battery staple' })
  @IsString()
  @MaxLength(4096)
  password: string;

  @ApiPropertyOptional({ description: 'Device fingerprint: a flat JSON object as a string, or an opaque string (≤ 4 KiB)' })
  @IsOptional()
  @IsString()
  deviceFingerprint?: string;
}

const REFRESH_TOKEN_FIELD = {
  description: 'The refresh token; may be omitted when it travels in the `__Host-refresh-<realmId>` cookie',
};

export class RefreshDto {
  @ApiPropertyOptional(REFRESH_TOKEN_FIELD)
  @IsOptional()
  @IsString()
  @MaxLength(256)
  refreshToken?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  deviceFingerprint?: string;
}

export class LogoutDto {
  @ApiPropertyOptional(REFRESH_TOKEN_FIELD)
  @IsOptional()
  @IsString()
  @MaxLength(256)
  refreshToken?: string;
}

/** PATCH /me. Omitted fields stay as they are; the domain trims and checks lengths and the URL. */
export class UpdateProfileDto {
  @ApiPropertyOptional({ example: 'Alice', maxLength: 100, description: 'Trimmed; 0–100 characters' })
  @ValidateIf((body: UpdateProfileDto) => body.firstName !== undefined)
  @IsString()
  @MaxLength(1000)
  firstName?: string;

  @ApiPropertyOptional({
    example: 'Smith',
    maxLength: 100,
    description: 'Trimmed; 0–100 characters. firstName and lastName not both empty',
  })
  @ValidateIf((body: UpdateProfileDto) => body.lastName !== undefined)
  @IsString()
  @MaxLength(1000)
  lastName?: string;

  @ApiPropertyOptional({
    type: 'string',
    nullable: true,
    example: 'https://images.example.com/alice.png',
    maxLength: 2048,
    description: 'An https URL, or null to remove the avatar',
  })
  @ValidateIf((body: UpdateProfileDto) => body.avatar !== undefined && body.avatar !== null)
  @IsString()
  @MaxLength(4096)
  avatar?: string | null;
}
