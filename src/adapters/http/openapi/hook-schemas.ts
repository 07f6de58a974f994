import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { HOOK_FAILURE_POLICIES, HOOK_NAMES } from '../../../domain/hook/hook';

/* Response shapes of the hook routes, for the OpenAPI document; hook-presenters.ts produces them. */

const AT = { example: '2026-11-25T21:44:00.000Z', format: 'date-time' };

export class HookView {
  @ApiProperty({ enum: HOOK_NAMES, example: 'before-sign-in' }) name: string;
  @ApiProperty({ example: 'https://backend.example.com/hooks/sign-in' }) url: string;
  @ApiProperty({ example: true }) enabled: boolean;
  @ApiProperty({ example: 2000 }) timeoutMs: number;
  @ApiProperty({ enum: HOOK_FAILURE_POLICIES, example: 'deny' }) failure: string;
  @ApiProperty(AT) createdAt: string;
  @ApiProperty(AT) updatedAt: string;
}

export class HooksResponse {
  @ApiProperty({ type: [HookView] }) hooks: HookView[];
}

export class PutHookResponse {
  @ApiProperty({ type: HookView }) hook: HookView;
  @ApiPropertyOptional({
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw4s2bZ0mJ1xk=',
    description: 'Signing secret, only when the hook is created; verify calls with a Standard Webhooks library',
  })
  secret?: string;
}

export class HookWithSecretResponse {
  @ApiProperty({ type: HookView }) hook: HookView;
  @ApiProperty({ example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw4s2bZ0mJ1xk=', description: 'The new signing secret, shown only now' })
  secret: string;
}
