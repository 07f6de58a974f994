import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { AUDIT_EVENT_TYPES } from '../../../domain/audit/audit-event';
import { ALL_EVENTS, WEBHOOK_DELIVERY_STATUSES, WebhookDeliveryStatus } from '../../../domain/webhook/webhook';
import { PageQuery } from './admin.dto';

const EVENT_CHOICES = [ALL_EVENTS, ...AUDIT_EVENT_TYPES];
const EVENTS_DOC = {
  enum: EVENT_CHOICES,
  isArray: true,
  example: ['user.registered', 'user.deleted'],
  description: 'Audit event types, or ["*"] for all of them',
};

export class CreateWebhookDto {
  @ApiProperty({ example: 'https://backend.example.com/hooks/identity', maxLength: 2048, description: 'https:// with a public address' })
  @IsString()
  @MaxLength(2048)
  url: string;

  @ApiProperty(EVENTS_DOC)
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(64)
  @IsIn(EVENT_CHOICES, { each: true, message: 'each event must be an audit event type or "*"' })
  events: string[];

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 500, example: 'Provisioning service' })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  description?: string | null;
}

export class UpdateWebhookDto {
  @ApiPropertyOptional({ example: 'https://backend.example.com/hooks/identity', maxLength: 2048 })
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  url?: string;

  @ApiPropertyOptional(EVENTS_DOC)
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(64)
  @IsIn(EVENT_CHOICES, { each: true, message: 'each event must be an audit event type or "*"' })
  events?: string[];

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 500 })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  description?: string | null;

  @ApiPropertyOptional({ example: true })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;
}

export class ListDeliveriesQuery extends PageQuery {
  @ApiPropertyOptional({ enum: WEBHOOK_DELIVERY_STATUSES })
  @IsOptional()
  @IsIn(WEBHOOK_DELIVERY_STATUSES)
  status?: WebhookDeliveryStatus;
}
