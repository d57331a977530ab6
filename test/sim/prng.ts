/**
 * The simulation's only source of randomness: mulberry32, a 32-bit seeded PRNG. Everything the simulation
 * chooses (operations, names, contents, faults, kill points) comes from an Rng, so a seed replays the same run.
 * Math.random is never called in test/sim.
 */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [lo, hi], both included. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('Rng.pick of an empty list');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** Pick by weight: [[weight, value], ...]. */
  weighted<T>(table: ReadonlyArray<readonly [number, T]>): T {
    const total = table.reduce((s, [w]) => s + w, 0);
    let r = this.next() * total;
    for (const [w, v] of table) {
      r -= w;
      if (r < 0) return v;
    }
    return table[table.length - 1]![1];
  }

  hex(chars: number): string {
    let s = '';
    while (s.length < chars) s += Math.floor(this.next() * 16).toString(16);
    return s;
  }

  /** An independent stream derived from this one (for a sub-task whose draws must not shift the others). */
  fork(): Rng {
    return new Rng(Math.floor(this.next() * 4294967296));
  }
}
