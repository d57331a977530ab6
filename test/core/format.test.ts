/**
 * The human forms of sizes and durations shared by `sync --once`, `boxsync status` and the engine's summary
 * line, as tables of input and exact output (scripts and other tests match these strings).
 */
import { describe, expect, it } from 'vitest';
import { formatBytes, formatBytesOneDecimal, formatDuration, formatWholeDuration } from '../../src/core/format.js';

const KIB = 1024;
const MIB = 1024 ** 2;
const GIB = 1024 ** 3;
const TIB = 1024 ** 4;

describe('formatBytes (IEC labels, shrinking precision)', () => {
  it.each([
    [0, '0 B'],
    [1023, '1023 B'],
    [512.4, '512 B'],
    [KIB, '1.0 KiB'],
    [1536, '1.5 KiB'],
    [10 * KIB, '10 KiB'],
    [1023 * KIB, '1023 KiB'],
    [25 * MIB, '25 MiB'],
    [GIB, '1.0 GiB'],
    [TIB, '1.0 TiB'],
    [2048 * TIB, '2048 TiB'],
  ])('%d -> %s', (bytes, text) => {
    expect(formatBytes(bytes)).toBe(text);
  });
});

describe('formatBytesOneDecimal (short labels, one decimal above bytes)', () => {
  it.each([
    [0, '0 B'],
    [5, '5 B'],
    [1023, '1023 B'],
    [512.3333333, '512 B'],
    [2 * KIB, '2.0 KB'],
    [1536, '1.5 KB'],
    [5 * MIB, '5.0 MB'],
    [GIB, '1.0 GB'],
    [TIB, '1.0 TB'],
    [2048 * TIB, '2048.0 TB'],
  ])('%d -> %s', (bytes, text) => {
    expect(formatBytesOneDecimal(bytes)).toBe(text);
  });
});

describe('formatDuration (run times)', () => {
  it.each([
    [0, '0 ms'],
    [250.4, '250 ms'],
    [999, '999 ms'],
    [1000, '1.0 s'],
    [1234, '1.2 s'],
    [59_900, '59.9 s'],
    [60_000, '1 min 0 s'],
    [125_000, '2 min 5 s'],
    [119_600, '2 min 0 s'],
    [3_599_700, '1 h 0 min'],
    [3_660_000, '1 h 1 min'],
  ])('%d ms -> %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe('formatWholeDuration (uptimes, retry delays, ETAs)', () => {
  it.each([
    [-5_000, '0 s'],
    [0, '0 s'],
    [400, '0 s'],
    [500, '1 s'],
    [59_000, '59 s'],
    [59_600, '1 min 0 s'],
    [125_000, '2 min 5 s'],
    [3_600_000, '1 h 0 min'],
    [90_061_000, '25 h 1 min'],
  ])('%d ms -> %s', (ms, text) => {
    expect(formatWholeDuration(ms)).toBe(text);
  });
});
