import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ListEventsUseCase } from '../../../application/admin/list-events.use-case';
import { Realm } from '../../../domain/realm/realm';
import { AdminAction, CurrentRealm, RealmHeader } from '../decorators';
import { ListEventsQuery } from '../dto/admin.dto';
import { present } from '../presenters';
import { EventsPage } from '../openapi/schemas';

/** The realm's audit trail. */
@ApiTags('admin')
@ApiBearerAuth()
@ApiHeader({ name: 'X-Realm-Id', required: true })
@RealmHeader('required')
@Controller('v1/admin/events')
export class AdminEventsController {
  constructor(private readonly listEvents: ListEventsUseCase) {}

  @ApiOperation({ summary: 'The realm’s audit events, newest first' })
  @ApiOkResponse({ type: EventsPage })
  @AdminAction('events.list')
  @Get()
  async list(@Query() query: ListEventsQuery, @CurrentRealm() realm: Realm) {
    const page = query.page ?? 1;
    const limit = query.limit ?? 20;
    const { events, total } = await this.listEvents.execute({
      realmId: realm.id,
      type: query.type,
      userId: query.userId,
      since: query.since ? new Date(query.since) : undefined,
      page,
      limit,
    });
    return { events: events.map(present.event), pagination: present.pagination(total, page, limit) };
  }
}
