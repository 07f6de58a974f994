import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBearerAuth, ApiCreatedResponse, ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminActor } from '../../../application/admin/admin-actor';
import { CreateWebhookUseCase } from '../../../application/webhooks/create-webhook.use-case';
import { DeleteWebhookUseCase } from '../../../application/webhooks/delete-webhook.use-case';
import { GetWebhookUseCase } from '../../../application/webhooks/get-webhook.use-case';
import { ListWebhookDeliveriesUseCase } from '../../../application/webhooks/list-webhook-deliveries.use-case';
import { ListWebhooksUseCase } from '../../../application/webhooks/list-webhooks.use-case';
import { RetryWebhookDeliveryUseCase } from '../../../application/webhooks/retry-webhook-delivery.use-case';
import { RotateWebhookSecretUseCase } from '../../../application/webhooks/rotate-webhook-secret.use-case';
import { UpdateWebhookUseCase } from '../../../application/webhooks/update-webhook.use-case';
import { Realm } from '../../../domain/realm/realm';
import { AdminAction, CurrentRealm, RealmHeader } from '../decorators';
import { EmptyBodyDto } from '../dto/empty-body.dto';
import { CreateWebhookDto, ListDeliveriesQuery, UpdateWebhookDto } from '../dto/webhook.dto';
import { CurrentAdmin } from '../guards/admin.guard';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { SuccessResponse } from '../openapi/schemas';
import {
  WebhookDeliveriesPage,
  WebhookDeliveryResponse,
  WebhookResponse,
  WebhooksResponse,
  WebhookWithSecretResponse,
} from '../openapi/webhook-schemas';
import { present } from '../presenters';
import { presentWebhooks } from '../webhook-presenters';

/** Webhooks: the realm's events, signed and sent to its backends. */
@ApiTags('admin')
@ApiBearerAuth()
@ApiHeader({ name: 'X-Realm-Id', required: true })
@RealmHeader('required')
@Controller('v1/admin/webhooks')
export class AdminWebhooksController {
  constructor(
    private readonly createWebhook: CreateWebhookUseCase,
    private readonly listWebhooks: ListWebhooksUseCase,
    private readonly getWebhook: GetWebhookUseCase,
    private readonly updateWebhook: UpdateWebhookUseCase,
    private readonly deleteWebhook: DeleteWebhookUseCase,
    private readonly rotateSecret: RotateWebhookSecretUseCase,
    private readonly listDeliveries: ListWebhookDeliveriesUseCase,
    private readonly retryDelivery: RetryWebhookDeliveryUseCase,
  ) {}

  @ApiOperation({ summary: 'Subscribe an endpoint to the realm’s events; the signing secret is shown only in this answer' })
  @ApiCreatedResponse({ type: WebhookWithSecretResponse })
  @AdminAction('webhooks.create')
  @Post()
  @HttpCode(201)
  async create(@Body() body: CreateWebhookDto, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    const webhook = await this.createWebhook.execute({
      actor,
      realmId: realm.id,
      url: body.url,
      events: body.events,
      description: body.description,
    });
    return { webhook: presentWebhooks.webhook(webhook, { withSecret: true }) };
  }

  @ApiOperation({ summary: 'The realm’s webhooks (without secrets)' })
  @ApiOkResponse({ type: WebhooksResponse })
  @AdminAction('webhooks.list')
  @Get()
  async list(@CurrentRealm() realm: Realm) {
    return { webhooks: (await this.listWebhooks.execute({ realmId: realm.id })).map((w) => presentWebhooks.webhook(w)) };
  }

  @ApiOperation({ summary: 'A webhook (without its secret)' })
  @ApiOkResponse({ type: WebhookResponse })
  @ApiErrors('WEBHOOK_NOT_FOUND')
  @AdminAction('webhook.read')
  @Get(':id')
  async get(@Param('id') id: string, @CurrentRealm() realm: Realm) {
    return { webhook: presentWebhooks.webhook(await this.getWebhook.execute({ realmId: realm.id, id })) };
  }

  @ApiOperation({ summary: 'Change a webhook’s URL, events, description or enabled state' })
  @ApiOkResponse({ type: WebhookResponse })
  @ApiErrors('WEBHOOK_NOT_FOUND')
  @AdminAction('webhook.update')
  @Patch(':id')
  async update(@Param('id') id: string, @Body() body: UpdateWebhookDto, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    const webhook = await this.updateWebhook.execute({ actor, realmId: realm.id, id, ...body });
    return { webhook: presentWebhooks.webhook(webhook) };
  }

  @ApiOperation({ summary: 'Delete a webhook; its pending deliveries are dropped' })
  @ApiOkResponse({ type: SuccessResponse })
  @ApiErrors('WEBHOOK_NOT_FOUND')
  @AdminAction('webhook.delete')
  @Delete(':id')
  @HttpCode(200)
  async remove(@Param('id') id: string, @Body() _body: EmptyBodyDto, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    await this.deleteWebhook.execute({ actor, realmId: realm.id, id });
    return { success: true };
  }

  @ApiOperation({ summary: 'New signing secret, shown only in this answer; the previous one signs too for WEBHOOK_SECRET_OVERLAP_SECONDS' })
  @ApiOkResponse({ type: WebhookWithSecretResponse })
  @ApiErrors('WEBHOOK_NOT_FOUND')
  @AdminAction('webhook.rotate-secret')
  @Post(':id/rotate-secret')
  @HttpCode(200)
  async rotate(@Param('id') id: string, @Body() _body: EmptyBodyDto, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    const webhook = await this.rotateSecret.execute({ actor, realmId: realm.id, id });
    return { webhook: presentWebhooks.webhook(webhook, { withSecret: true }) };
  }

  @ApiOperation({ summary: 'A webhook’s deliveries, newest first' })
  @ApiOkResponse({ type: WebhookDeliveriesPage })
  @ApiErrors('WEBHOOK_NOT_FOUND')
  @AdminAction('webhook.deliveries.list')
  @Get(':id/deliveries')
  async deliveries(@Param('id') id: string, @Query() query: ListDeliveriesQuery, @CurrentRealm() realm: Realm) {
    const page = query.page ?? 1;
    const limit = query.limit ?? 20;
    const { deliveries, total } = await this.listDeliveries.execute({
      realmId: realm.id,
      webhookId: id,
      status: query.status,
      page,
      limit,
    });
    return { deliveries: deliveries.map(presentWebhooks.delivery), pagination: present.pagination(total, page, limit) };
  }

  @ApiOperation({ summary: 'Queue a failed delivery again (same webhook-id)' })
  @ApiAcceptedResponse({ type: WebhookDeliveryResponse })
  @ApiErrors('WEBHOOK_NOT_FOUND', 'NOT_FOUND')
  @AdminAction('webhook.delivery.retry')
  @Post(':id/deliveries/:deliveryId/retry')
  @HttpCode(202)
  async retry(@Param('id') id: string, @Param('deliveryId') deliveryId: string, @Body() _body: EmptyBodyDto, @CurrentRealm() realm: Realm) {
    const delivery = await this.retryDelivery.execute({ realmId: realm.id, webhookId: id, deliveryId });
    return { delivery: presentWebhooks.delivery(delivery) };
  }
}
