export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Name resolution (DNS) for outgoing connections. */
export abstract class HostResolver {
  /** Every address `hostname` resolves to; an error when it resolves to none. */
  abstract resolve(hostname: string): Promise<ResolvedAddress[]>;
}
