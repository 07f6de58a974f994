/** Runs work in one database transaction; repositories called inside join it. */
export abstract class Transaction {
  /** Nested calls join the outer transaction. A thrown error rolls everything back. */
  abstract run<T>(work: () => Promise<T>): Promise<T>;

  /**
   * Work that only writes: its writes reach the database together as one atomic statement when
   * work returns; nothing is written if work throws. One round trip and no transaction to open,
   * for hot paths whose writes need no answer (the repository methods documented as batchable).
   *
   * Inside, a read or a `run` is a programming error and throws. The writes see none of each
   * other's effects: none may depend on another (update a row inserted by the same batch), and no
   * two may change the same row; constraints are checked once all have run, so a row may reference
   * one inserted earlier in the batch. A failing write (a constraint) rejects `batch` itself, not
   * the repository call that queued it. Inside `run` it joins the transaction: writes happen at once.
   */
  abstract batch<T>(work: () => Promise<T>): Promise<T>;

  /**
   * Runs `effect` (a log line, a metric: nothing that can fail the work) once the writes made so
   * far in the current `run` or `batch` are stored — after its commit or its statement — and
   * not at all if they are not. Outside both, at once.
   */
  abstract afterCommit(effect: () => void): void;
}
