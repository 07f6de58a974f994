/** The time source; tests substitute a controllable clock. */
export abstract class Clock {
  abstract now(): Date;
}
