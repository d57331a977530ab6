/** A Clock whose time moves only when the test says so; sleeps resolve when time passes their deadline. */
import type { Clock } from '../../../src/ports/clock.js';

export class ManualClock implements Clock {
  private t: number;
  private readonly sleepers: { until: number; resolve: () => void }[] = [];

  constructor(startMs = 1_700_000_000_000) {
    this.t = startMs;
  }

  now(): number {
    return this.t;
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.sleepers.push({ until: this.t + ms, resolve }));
  }

  get sleeping(): number {
    return this.sleepers.length;
  }

  /** The earliest time a sleeper waits for, or null when none sleeps (for tests that run time event by event). */
  get nextDeadlineMs(): number | null {
    return this.sleepers.length === 0 ? null : Math.min(...this.sleepers.map((s) => s.until));
  }

  advance(ms: number): void {
    this.t += ms;
    for (let i = this.sleepers.length - 1; i >= 0; i--) {
      const s = this.sleepers[i]!;
      if (s.until <= this.t) {
        this.sleepers.splice(i, 1);
        s.resolve();
      }
    }
  }
}
