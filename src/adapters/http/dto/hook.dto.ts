import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { HOOK_FAILURE_POLICIES, HOOK_TIMEOUT_MS, HookFailurePolicy } from '../../../domain/hook/hook';

export class PutHookDto {
  @ApiProperty({ example: 'https://backend.example.com/hooks/sign-in', maxLength: 2048, description: 'https:// with a public address' })
  @IsString()
  @MaxLength(2048)
  url: string;

  @ApiPropertyOptional({ example: true, default: true })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;

  @ApiPropertyOptional({ example: 2000, minimum: HOOK_TIMEOUT_MS.min, maximum: HOOK_TIMEOUT_MS.max, default: HOOK_TIMEOUT_MS.default })
  @IsOptional()
  @IsInt()
  @Min(HOOK_TIMEOUT_MS.min)
  @Max(HOOK_TIMEOUT_MS.max)
  timeoutMs?: number;

  @ApiPropertyOptional({
    enum: HOOK_FAILURE_POLICIES,
    description: 'What a failed call means; default deny for before-registration and before-sign-in, allow for token-claims',
  })
  @IsOptional()
  @IsIn(HOOK_FAILURE_POLICIES)
  failure?: HookFailurePolicy;
}
