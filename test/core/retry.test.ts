import { describe, expect, it } from 'vitest';
import { backoffDelayMs, itemBackoff, nominalDelayMs } from '../../src/core/retry.js';

const policy = { baseMs: 1000, maxMs: 60_000, factor: 2 };

describe('retry delays', () => {
  it('doubles up to the cap', () => {
    expect([1, 2, 3, 4, 7, 8, 1000].map((n) => nominalDelayMs(policy, n))).toEqual([1000, 2000, 4000, 8000, 60_000, 60_000, 60_000]);
    expect(nominalDelayMs(itemBackoff, 1)).toBe(30_000);
  });

  it('jitters between half and all of the nominal delay', () => {
    expect(backoffDelayMs({ policy, attempt: 3, random: 0 })).toBe(2000);
    expect(backoffDelayMs({ policy, attempt: 3, random: 0.5 })).toBe(3000);
    expect(backoffDelayMs({ policy, attempt: 3, random: 0.999999 })).toBe(4000);
  });

  it('honours a longer Retry-After, never a shorter one', () => {
    expect(backoffDelayMs({ policy, attempt: 1, random: 0, retryAfterMs: 30_000 })).toBe(30_000);
    expect(backoffDelayMs({ policy, attempt: 4, random: 1, retryAfterMs: 10 })).toBe(8000);
  });
});
