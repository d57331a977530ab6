/**
 * A cap on transfer bandwidth (`--bwlimit`, config `http.bwlimitKiBps`): one token bucket shared by every
 * download and upload of the client, so the cap holds for the total, as rclone's --bwlimit does. The bucket
 * holds at most a quarter second of bytes, so bursts stay small; a wait is abortable and bounded by the size
 * of the chunk asked for. Box's answers and the API calls themselves are not counted (they are small).
 *
 * Small transfers go first: while a transfer of a small file (under SMALL_TRANSFER_BYTES) waits for bytes, a big
 * one takes none, so a save of a small file is not starved by a 500 MB upload sharing the cap (engine/live-lane.ts
 * lets it run beside the big one). The big one waits at most as long as the small ones need, which is bounded by
 * their size.
 */
import type { Clock } from '../../ports/clock.js';

/** A transfer of a file below this size goes first (the transfer queue's SMALL_FILE_BYTES, engine/transfer-queue.ts). */
export const SMALL_TRANSFER_BYTES = 1024 * 1024;

export class Bandwidth {
  private tokens = 0;
  /** Small transfers waiting for bytes: big ones leave the bucket to them. */
  private smallWaiting = 0;
  private lastMs: number;
  private burst = 0;
  private rate: number | null = null;

  /** `bytesPerSec` null: no cap (yet); the daemon's `bwlimit` verb sets one live with setRate. */
  constructor(
    bytesPerSec: number | null,
    private readonly clock: Clock,
  ) {
    this.lastMs = clock.now();
    this.setRate(bytesPerSec);
    this.tokens = this.burst;
  }

  /** The cap in bytes per second, or null for none. */
  get bytesPerSec(): number | null {
    return this.rate;
  }

  /** Change the cap while transfers run (null: off); the next chunk of every transfer obeys the new rate. */
  setRate(bytesPerSec: number | null): void {
    if (bytesPerSec !== null && !(bytesPerSec > 0)) throw new Error(`a bandwidth limit must be positive (got ${bytesPerSec})`);
    this.rate = bytesPerSec;
    if (bytesPerSec === null) return;
    this.burst = Math.max(16 * 1024, bytesPerSec / 4);
    this.tokens = Math.min(this.tokens, this.burst);
    this.lastMs = this.clock.now();
  }

  /** Wait until `bytes` may pass; `fileBytes`, the size of the file they belong to, says whether it goes first. */
  async take(bytes: number, signal?: AbortSignal, fileBytes = Number.POSITIVE_INFINITY): Promise<void> {
    const small = fileBytes < SMALL_TRANSFER_BYTES;
    if (small) this.smallWaiting += 1;
    try {
      await this.takeAs(bytes, small, signal);
    } finally {
      if (small) this.smallWaiting -= 1;
    }
  }

  private async takeAs(bytes: number, small: boolean, signal: AbortSignal | undefined): Promise<void> {
    let left = bytes;
    while (left > 0) {
      signal?.throwIfAborted();
      const rate = this.rate;
      if (rate === null) return;
      this.refill(rate);
      const now = Math.min(left, this.burst);
      if (!small && this.smallWaiting > 0) {
        // A small transfer waits: the bytes that come in the time it needs are its own.
        await this.clock.sleep(Math.max(1, Math.ceil((this.burst / rate) * 1000)), signal);
        continue;
      }
      if (this.tokens >= now) {
        this.tokens -= now;
        left -= now;
        continue;
      }
      // Bounded by a quarter second's worth at most, so a new rate set meanwhile is obeyed soon.
      await this.clock.sleep(Math.min(1000, Math.ceil(((now - this.tokens) / rate) * 1000)), signal);
    }
  }

  private refill(rate: number): void {
    const t = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.lastMs) / 1000) * rate);
    this.lastMs = t;
  }
}

/**
 * A rate as rclone writes it: a number with an optional B, K, M or G suffix (binary units; no suffix means KiB),
 * per second. Returns bytes per second, or null for "off"/"0"; throws on anything else.
 */
export function parseRate(text: string): number | null {
  const t = text.trim();
  if (t === '' || t === '0' || t.toLowerCase() === 'off') return null;
  const m = /^(\d+(?:\.\d+)?)\s*([bkmg]?)(?:i?b?)?(?:\/s)?$/i.exec(t);
  if (!m) throw new Error(`"${text}" is not a rate: write it like 500K, 2M or 1.5M (bytes per second; no suffix means KiB)`);
  const unit = { '': 1024, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[m[2]!.toLowerCase() as '' | 'b' | 'k' | 'm' | 'g'];
  const bytes = Math.round(Number(m[1]) * unit);
  if (bytes <= 0) return null;
  return bytes;
}
