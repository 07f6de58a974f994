import { Module } from '@nestjs/common';
import { HousekeepingUseCase } from '../application/housekeeping/housekeeping.use-case';
import { ExpiredDataPurger } from '../application/ports/expired-data-purger';
import { JobLock } from '../application/ports/job-lock';
import { HousekeepingScheduler } from '../adapters/lifecycle/housekeeping-scheduler';
import { AdvisoryJobLock } from '../adapters/persistence/advisory-job-lock';
import { TypeOrmExpiredDataPurger } from '../adapters/persistence/typeorm-expired-data-purger';
import { OpenIdProviderModule } from './openid-provider.module';

/** The periodic purge of expired sessions, tokens and events, run by one instance at a time. */
@Module({
  imports: [OpenIdProviderModule],
  providers: [
    { provide: JobLock, useClass: AdvisoryJobLock },
    { provide: ExpiredDataPurger, useClass: TypeOrmExpiredDataPurger },
    HousekeepingUseCase,
    HousekeepingScheduler,
  ],
})
export class HousekeepingModule {}
