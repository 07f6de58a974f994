import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsEmail, IsOptional, IsString, MaxLength } from 'class-validator';
import { TrimString } from './auth.dto';

export class EmailLinkTokenDto {
  @ApiProperty({ description: 'The token from the link in the email (`?token=…`)' })
  @IsString()
  @MaxLength(256)
  token: string;

  @ApiPropertyOptional({
    description:
      'true when the owner of the address did not create this account: the address is verified and the account ' +
      'taken over (its password, second factors, linked accounts, sessions and profile removed)',
  })
  @IsOptional()
  @IsBoolean()
  notMe?: boolean;
}

export class EmailAddressDto {
  @ApiProperty({ example: 'alice@example.com', maxLength: 254 })
  @TrimString()
  @IsString()
  @MaxLength(254)
  @IsEmail()
  email: string;
}

export class ResetPasswordDto {
  @ApiProperty({ description: 'The token from the reset link in the email' })
  @IsString()
  @MaxLength(256)
  token: string;

  @ApiProperty({ minLength: 8, maxLength: 128, description: '8–128 Unicode code points after NFKC; not a common password' })
  @IsString()
  password: string;
}

export class ChangePasswordDto {
  @ApiPropertyOptional({
    description: 'Required when the account has a password; omitted to set the first password of an account without one',
  })
  @IsOptional()
  @IsString()
  @MaxLength(4096)
  currentPassword?: string;

  @ApiProperty({ minLength: 8, maxLength: 128, description: '8–128 Unicode code points after NFKC; not a common password' })
  @IsString()
  newPassword: string;
}
