import { Clock } from '../../src/application/ports/clock';

/** A clock tests move by hand: time travel instead of sleeping. */
export class TestClock extends Clock {
  private offsetMs = 0;

  constructor(private readonly base: Date | null = null) {
    super();
  }

  now(): Date {
    return new Date((this.base ? this.base.getTime() : Date.now()) + this.offsetMs);
  }

  advance(seconds: number): void {
    this.offsetMs += seconds * 1000;
  }
}
