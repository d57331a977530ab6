/**
 * The most recent numbers (times, usually) in arrival order, at most `capacity` of them: a push when full drops the
 * oldest, and dropping from the old end moves nothing (an array's shift or splice of its front moves every element
 * left; at 20,000 request start times that was a memmove per request). The buffer grows by doubling up to its
 * capacity, so a ring that holds a few numbers costs a few.
 */
export class NumberRing {
  private buf: Float64Array;
  /** Index of the oldest number in buf. */
  private head = 0;
  private count = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`a ring holds at least 1 number (asked for ${capacity})`);
    this.buf = new Float64Array(Math.min(capacity, 64));
  }

  get length(): number {
    return this.count;
  }

  /** Adds the newest number; when full, the oldest is dropped. */
  push(x: number): void {
    if (this.count === this.buf.length && this.buf.length < this.capacity) this.grow();
    if (this.count === this.buf.length) {
      this.buf[this.head] = x;
      this.head = (this.head + 1) % this.buf.length;
      return;
    }
    this.buf[(this.head + this.count) % this.buf.length] = x;
    this.count += 1;
  }

  /** The i-th number from the oldest (0: the oldest); a negative i counts from the newest (-1: the newest). */
  at(i: number): number | undefined {
    const k = i < 0 ? this.count + i : i;
    if (k < 0 || k >= this.count) return undefined;
    return this.buf[(this.head + k) % this.buf.length];
  }

  /** Drops the oldest numbers while `old` says so; returns how many went. */
  dropWhile(old: (x: number) => boolean): number {
    let n = 0;
    while (this.count > 0 && old(this.buf[this.head]!)) {
      this.head = (this.head + 1) % this.buf.length;
      this.count -= 1;
      n += 1;
    }
    if (this.count === 0) this.head = 0;
    return n;
  }

  private grow(): void {
    const next = new Float64Array(Math.min(this.capacity, this.buf.length * 2));
    for (let k = 0; k < this.count; k++) next[k] = this.buf[(this.head + k) % this.buf.length]!;
    this.buf = next;
    this.head = 0;
  }
}
