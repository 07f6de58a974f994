import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { deploymentDefaults, RealmSettings } from '../../domain/realm/realm-settings';

/** The deployment's settings (the environment), which every realm follows where it sets nothing itself. */
export function realmDefaultsFrom(config: AppConfig): RealmSettings {
  return deploymentDefaults(config);
}

/** The deployment defaults as an injectable value, for whoever creates or restores realms. */
@Injectable()
export class RealmDefaults {
  readonly settings: RealmSettings;

  constructor(config: AppConfig) {
    this.settings = realmDefaultsFrom(config);
  }
}
