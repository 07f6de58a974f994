/** Mutual exclusion for scheduled jobs across every instance of the service. */
export abstract class JobLock {
  /**
   * Runs `work` while holding the lock called `name`, unless another holder — in this instance
   * or another — has it; then returns false at once without running `work`. The lock is
   * released when `work` settles, or when the holder's process dies.
   */
  abstract runExclusive(name: string, work: () => Promise<void>): Promise<boolean>;
}
