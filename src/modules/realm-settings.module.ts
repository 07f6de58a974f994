import { Global, Module } from '@nestjs/common';
import { GetRealmUseCase } from '../application/admin/get-realm.use-case';
import { UpdateRealmUseCase } from '../application/admin/update-realm.use-case';
import { RealmDefaults } from '../application/realm/realm-defaults';
import { RealmDirectory } from '../application/realm/realm-directory';
import { AdminRealmSettingsController } from '../adapters/http/controllers/admin-realm-settings.controller';

/**
 * Realms as tenants: the deployment defaults every realm follows where it sets nothing, the realm
 * directory every request reads its realm through (a short cache), and the settings over REST.
 * Global: the realm guard, the access-token check and the realm repository need the first two.
 */
@Global()
@Module({
  controllers: [AdminRealmSettingsController],
  providers: [RealmDefaults, RealmDirectory, GetRealmUseCase, UpdateRealmUseCase],
  exports: [RealmDefaults, RealmDirectory, UpdateRealmUseCase],
})
export class RealmSettingsModule {}
