/** NumberRing (src/core/ring.ts): the rate limiter's recent start times, kept without shifting an array. */
import { describe, expect, it } from 'vitest';
import { NumberRing } from '../../src/core/ring.js';

const all = (r: NumberRing): number[] => Array.from({ length: r.length }, (_, i) => r.at(i)!);

describe('NumberRing', () => {
  it('keeps the newest numbers in arrival order, dropping the oldest when full, across growth and wrap-around', () => {
    const r = new NumberRing(100);
    for (let i = 0; i < 70; i++) r.push(i); // grows past its first 64
    expect(r.length).toBe(70);
    expect(r.dropWhile((x) => x < 50)).toBe(50);
    for (let i = 70; i < 250; i++) r.push(i); // wraps, then is full: the oldest go
    expect(r.length).toBe(100);
    expect(all(r)).toEqual(Array.from({ length: 100 }, (_, i) => 150 + i));
    expect(r.at(0)).toBe(150);
    expect(r.at(-1)).toBe(249);
    expect(r.at(-100)).toBe(150);
    expect(r.at(100)).toBeUndefined();
    expect(r.at(-101)).toBeUndefined();
  });

  it('drops from the old end only while the test holds; empty, it takes numbers again', () => {
    const r = new NumberRing(4);
    for (const x of [5, 1, 7, 2]) r.push(x);
    expect(r.dropWhile((x) => x < 6)).toBe(2); // stops at 7, though 2 after it is small
    expect(all(r)).toEqual([7, 2]);
    expect(r.dropWhile(() => true)).toBe(2);
    expect(r.length).toBe(0);
    expect(r.at(-1)).toBeUndefined();
    r.push(9);
    expect(all(r)).toEqual([9]);
    expect(() => new NumberRing(0)).toThrow(RangeError);
  });
});
