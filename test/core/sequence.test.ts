import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compareSequence } from '../../src/core/sequence.js';

describe('compareSequence', () => {
  it('compares as big decimals, beyond 2^53', () => {
    expect(compareSequence('2', '10')).toBe(-1);
    expect(compareSequence('10', '2')).toBe(1);
    expect(compareSequence('007', '7')).toBe(0);
    expect(compareSequence('9007199254740993', '9007199254740992')).toBe(1);
    expect(compareSequence('3', '2')).toBe(1);
    expect(compareSequence('2', '2')).toBe(0);
  });

  it('sorts missing and malformed ids first', () => {
    expect(compareSequence(null, '0')).toBe(-1);
    expect(compareSequence('', '0')).toBe(-1);
    expect(compareSequence('abc', null)).toBe(0);
    expect(compareSequence('0', null)).toBe(1);
    expect(compareSequence(null, '5')).toBe(-1);
  });

  it('agrees with BigInt on random values', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 30n }), fc.bigInt({ min: 0n, max: 10n ** 30n }), (a, b) => {
        const expected = a < b ? -1 : a > b ? 1 : 0;
        expect(compareSequence(a.toString(), b.toString())).toBe(expected);
      }),
    );
  });
});
