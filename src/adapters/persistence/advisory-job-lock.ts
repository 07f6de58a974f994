import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { JobLock } from '../../application/ports/job-lock';
import { AppConfig } from '../../config/app-config';

/** First key of the two-key advisory locks of scheduled jobs (the second is the job name's hash). */
export const JOB_LOCK_NAMESPACE = 7263;

/** A stable 32-bit signed hash of the job name (FNV-1a), the second advisory-lock key. */
export function jobLockKey(name: string): number {
  let hash = 0x811c9dc5;
  for (const char of Buffer.from(name, 'utf8')) hash = Math.imul(hash ^ char, 0x01000193);
  return hash | 0;
}

/** Jobs running in this process, per database: the embedded database's lock. */
const running = new WeakMap<DataSource, Set<string>>();

/**
 * On PostgreSQL, a session-level advisory lock (`pg_try_advisory_lock`) held on a connection of
 * its own for the whole job: one instance runs it at a time, and a crashed holder's lock goes
 * with its connection. The embedded PGlite has a single session (advisory locks would always be
 * granted to it) and is only ever opened by one process, so there an in-process lock suffices.
 */
@Injectable()
export class AdvisoryJobLock implements JobLock {
  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {}

  async runExclusive(name: string, work: () => Promise<void>): Promise<boolean> {
    return this.config.databaseUrl ? this.runWithAdvisoryLock(name, work) : this.runInProcess(name, work);
  }

  private async runWithAdvisoryLock(name: string, work: () => Promise<void>): Promise<boolean> {
    const key = jobLockKey(name);
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      const [row]: { locked: boolean }[] = await runner.query(`SELECT pg_try_advisory_lock($1, $2) AS locked`, [JOB_LOCK_NAMESPACE, key]);
      if (!row?.locked) return false;
      try {
        await work();
      } finally {
        await runner.query(`SELECT pg_advisory_unlock($1, $2)`, [JOB_LOCK_NAMESPACE, key]).catch(() => undefined);
      }
      return true;
    } finally {
      await runner.release();
    }
  }

  private async runInProcess(name: string, work: () => Promise<void>): Promise<boolean> {
    let jobs = running.get(this.dataSource);
    if (!jobs) running.set(this.dataSource, (jobs = new Set()));
    if (jobs.has(name)) return false;
    jobs.add(name);
    try {
      await work();
    } finally {
      jobs.delete(name);
    }
    return true;
  }
}
