export interface ReadinessCheck {
  name: string;
  ok: boolean;
  /** Shown in /health/ready; never an internal error message. */
  detail?: string | number;
  /** A check that may fail without making the instance unready (e.g. a degraded cache). */
  critical: boolean;
}

/** One dependency's readiness (database, migrations, outbox, rate-limit storage). */
export abstract class ReadinessProbe {
  abstract check(): Promise<ReadinessCheck[]>;
}

/** DI token of the list of probes /health/ready asks. */
export const READINESS_PROBES = Symbol('READINESS_PROBES');
