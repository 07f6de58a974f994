import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { AUDIT_EVENT_TYPES } from '../../../domain/audit/audit-event';
import { ALL_EVENTS, WEBHOOK_DELIVERY_STATUSES } from '../../../domain/webhook/webhook';
import { PaginationView } from './schemas';

/* Response shapes of the webhook routes, for the OpenAPI document; presenters.ts produces them. */

const ID = { example: '0f8b5a52-3f0e-4a8e-9d55-2b8e0a3c7d11' };
const AT = { example: '2026-11-25T21:44:00.000Z', format: 'date-time' };

export class WebhookView {
  @ApiProperty(ID) id: string;
  @ApiProperty({ example: 'https://backend.example.com/hooks/identity' }) url: string;
  @ApiProperty({ type: 'array', items: { type: 'string', enum: [ALL_EVENTS, ...AUDIT_EVENT_TYPES] }, example: ['user.registered'] })
  events: string[];
  @ApiProperty({ type: String, nullable: true, example: 'Provisioning service' }) description: string | null;
  @ApiProperty({ example: true, description: 'false: nothing is sent (also after a 410 Gone answer)' }) enabled: boolean;
  @ApiProperty(AT) createdAt: string;
}

export class WebhookWithSecretView extends WebhookView {
  @ApiProperty({
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw4s2bZ0mJ1xk=',
    description: 'Signing secret, shown only now; verify deliveries with a Standard Webhooks library',
  })
  secret: string;
}

export class WebhookResponse {
  @ApiProperty({ type: WebhookView }) webhook: WebhookView;
}

export class WebhookWithSecretResponse {
  @ApiProperty({ type: WebhookWithSecretView }) webhook: WebhookWithSecretView;
}

export class WebhooksResponse {
  @ApiProperty({ type: [WebhookView] }) webhooks: WebhookView[];
}

export class WebhookDeliveryView {
  @ApiProperty({ ...ID, description: 'Sent as webhook-id with every attempt' }) id: string;
  @ApiProperty(ID) eventId: string;
  @ApiProperty({ example: 'user.registered' }) type: string;
  @ApiProperty({ enum: WEBHOOK_DELIVERY_STATUSES, example: 'delivered' }) status: string;
  @ApiProperty({ example: 1 }) attempts: number;
  @ApiProperty({ type: Number, nullable: true, example: 204 }) lastStatusCode: number | null;
  @ApiProperty({ type: String, nullable: true, example: null }) lastError: string | null;
  @ApiProperty({ ...AT, type: String, nullable: true }) lastAttemptAt: string | null;
  @ApiPropertyOptional({ ...AT, type: String, nullable: true, description: 'null unless pending' }) nextAttemptAt: string | null;
  @ApiProperty(AT) createdAt: string;
}

export class WebhookDeliveriesPage {
  @ApiProperty({ type: [WebhookDeliveryView] }) deliveries: WebhookDeliveryView[];
  @ApiProperty({ type: PaginationView }) pagination: PaginationView;
}

export class WebhookDeliveryResponse {
  @ApiProperty({ type: WebhookDeliveryView }) delivery: WebhookDeliveryView;
}
