import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsObject, IsOptional, IsString, MaxLength } from 'class-validator';

export class PasskeyVerifyDto {
  @ApiProperty({ description: 'The challengeId from POST /passkeys/options' })
  @IsString()
  @MaxLength(256)
  challengeId: string;

  @ApiProperty({
    description: 'The authentication response of @simplewebauthn/browser startAuthentication (AuthenticationResponseJSON), as an object',
    type: 'object',
    additionalProperties: true,
  })
  @IsObject()
  response: Record<string, unknown>;

  @ApiPropertyOptional({ description: 'Device fingerprint, as at login (≤ 4 KiB)' })
  @IsOptional()
  @IsString()
  deviceFingerprint?: string;
}
