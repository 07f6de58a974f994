import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { BootstrapUseCase } from '../../application/admin/bootstrap.use-case';

/** Runs the first-start bootstrap (realms, signing key, bootstrap admin) before the app listens. */
@Injectable()
export class BootstrapRunner implements OnApplicationBootstrap {
  private readonly logger = new Logger('Bootstrap');

  constructor(private readonly bootstrap: BootstrapUseCase) {}

  async onApplicationBootstrap(): Promise<void> {
    const { bootstrapAdmin } = await this.bootstrap.execute();
    if (bootstrapAdmin === 'exists') {
      this.logger.error(
        'BOOTSTRAP_ADMIN_EMAIL belongs to an existing account of realm "master", which was not made super-admin: ' +
          'whoever created it chose its password. Set another address, or promote the account with ' +
          '`npm run cli -- create-admin master <email> --super --existing` once you know it is yours.',
      );
    }
  }
}
