import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ReadinessCheck, ReadinessProbe } from '../../application/ports/readiness-probe';

/** Database reachable and every migration applied. */
@Injectable()
export class TypeOrmReadinessProbe implements ReadinessProbe {
  constructor(private readonly dataSource: DataSource) {}

  async check(): Promise<ReadinessCheck[]> {
    try {
      const pending = await this.dataSource.showMigrations();
      return [
        { name: 'database', ok: true, critical: true },
        { name: 'migrations', ok: !pending, detail: pending ? 'pending' : 'applied', critical: true },
      ];
    } catch {
      return [{ name: 'database', ok: false, detail: 'unreachable', critical: true }];
    }
  }
}
