import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { BootstrapUseCase } from '../../application/admin/bootstrap.use-case';

/** Runs the first-start bootstrap (realms, signing key, bootstrap admin) before the app listens. */
@Injectable()
export class BootstrapRunner implements OnApplicationBootstrap {
  constructor(private readonly bootstrap: BootstrapUseCase) {}

  onApplicationBootstrap(): Promise<void> {
    return this.bootstrap.execute();
  }
}
