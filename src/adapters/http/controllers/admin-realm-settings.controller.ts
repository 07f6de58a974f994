import { Body, Controller, Get, Patch } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminActor } from '../../../application/admin/admin-actor';
import { GetRealmUseCase } from '../../../application/admin/get-realm.use-case';
import { UpdateRealmUseCase } from '../../../application/admin/update-realm.use-case';
import { Realm } from '../../../domain/realm/realm';
import { AdminAction, CurrentRealm, RealmHeader } from '../decorators';
import { UpdateRealmDto } from '../dto/realm-settings.dto';
import { CurrentAdmin } from '../guards/admin.guard';
import { present } from '../presenters';
import { RealmResponse } from '../openapi/schemas';

/** The settings of the X-Realm-Id realm: its realm-admins, or a super-admin. */
@ApiTags('admin')
@ApiBearerAuth()
@ApiHeader({ name: 'X-Realm-Id', required: true })
@RealmHeader('required')
@Controller('v1/admin/realm')
export class AdminRealmSettingsController {
  constructor(
    private readonly getRealm: GetRealmUseCase,
    private readonly updateRealm: UpdateRealmUseCase,
  ) {}

  @ApiOperation({ summary: 'The realm with every setting in force (its own or the deployment default)' })
  @ApiOkResponse({ type: RealmResponse })
  @AdminAction('realm.read')
  @Get()
  async get(@CurrentRealm() realm: Realm) {
    return { realm: present.realm(await this.getRealm.execute(realm.id)) };
  }

  @ApiOperation({
    summary: 'Change the realm: name, enabled, settings (merged field by field; null returns a field to the deployment default)',
  })
  @ApiOkResponse({ type: RealmResponse })
  @AdminAction('realm.update')
  @Patch()
  async update(@Body() body: UpdateRealmDto, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    const updated = await this.updateRealm.execute({
      realmId: realm.id,
      name: body.name,
      enabled: body.enabled,
      settings: body.settings,
      actorId: actor.id,
      ip: actor.ip,
    });
    return { realm: present.realm(updated) };
  }
}
