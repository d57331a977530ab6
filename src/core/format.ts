/**
 * How sizes and durations read to a person: the one place the CLI progress bar and run summary
 * (src/cli/progress.ts), the daemon's status text (src/daemon/control/status-text.ts) and the engine's pass summary
 * (src/engine/summary.ts) turn numbers into words. Pure functions, no locale: the output is the same on every
 * machine, so tests and scripts may match it.
 *
 * Two byte styles are in use and both are pinned by tests, so both live here rather than one being picked:
 * - `formatBytes`: IEC labels, precision that shrinks as the figure grows ('1.5 KiB', '25 MiB'); what
 *   `sync --once` prints.
 * - `formatBytesOneDecimal`: short labels (still powers of 1024) and always one decimal above bytes
 *   ('2.0 KB', '5.0 MB'); what `boxsync status` and the engine's summary line print.
 *
 * Likewise two duration styles:
 * - `formatDuration`: sub-second figures in ms, under a minute with a tenth of a second, longer ones as
 *   `formatWholeDuration`; for run times, where the fraction matters.
 * - `formatWholeDuration`: whole seconds, minutes and seconds, or hours and minutes; negative spans read as
 *   0 s; for uptimes, retry delays and ETAs.
 */

const IEC_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'] as const;
const SHORT_UNITS = ['B', 'KB', 'MB', 'GB', 'TB'] as const;

interface Scaled {
  readonly value: number;
  readonly unitIndex: number;
}

/** Divides by 1024 until the value is under 1024 or the largest unit (TiB) is reached. */
function scaleBy1024(bytes: number): Scaled {
  let value = bytes;
  let unitIndex = 0;
  while (value >= 1024 && unitIndex < IEC_UNITS.length - 1) {
    value /= 1024;
    unitIndex++;
  }
  return { value, unitIndex };
}

/** '0 B', '1023 B', '1.5 KiB', '25 MiB', '1.0 GiB'; fractional byte counts (rates) round to whole bytes. */
export function formatBytes(bytes: number): string {
  const { value, unitIndex } = scaleBy1024(bytes);
  return unitIndex === 0 ? `${Math.round(value)} B` : `${value.toFixed(value < 10 ? 1 : 0)} ${IEC_UNITS[unitIndex]}`;
}

/** '5 B', '2.0 KB', '5.0 MB', '1.0 GB'; fractional byte counts (rates) round to whole bytes. */
export function formatBytesOneDecimal(bytes: number): string {
  const { value, unitIndex } = scaleBy1024(bytes);
  return `${unitIndex === 0 ? Math.round(value) : value.toFixed(1)} ${SHORT_UNITS[unitIndex]}`;
}

/** '250 ms', '1.2 s', '59.9 s', then as formatWholeDuration ('2 min 5 s', '1 h 1 min'). */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const sec = ms / 1000;
  if (sec < 60) return `${sec.toFixed(1)} s`;
  return formatWholeDuration(ms);
}

/** Rounded to whole seconds first: '0 s', '59 s', '2 min 5 s', '1 h 1 min'; negative spans read as '0 s'. */
export function formatWholeDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}
