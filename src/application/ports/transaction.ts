/** Runs work in one database transaction; repositories called inside join it. */
export abstract class Transaction {
  /** Nested calls join the outer transaction. A thrown error rolls everything back. */
  abstract run<T>(work: () => Promise<T>): Promise<T>;
}
