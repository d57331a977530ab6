/**
 * Box name rules and conflict-copy names. PURE.
 *
 * Box refuses a name that is empty or longer than 255 characters, contains '/' or '\', contains a
 * non-printable ASCII character (0x00-0x1F, 0x7F), ends with a space, or is '.' or '..'. Such local names are
 * reported (ReportOp 'name-invalid' / 'name-too-long'), never retried: retrying cannot succeed.
 *
 * Conflict copies are named `stem (conflicted copy YYYY-MM-DD HHMMSS).ext`, in UTC, from the planner's
 * `nowMs` (never a clock read). When that name is taken, a counter is added inside the parentheses:
 * `stem (conflicted copy 2026-11-22 134501 2).ext`. A conflict copy of a conflict copy replaces the old marker
 * instead of appending a second one, so names never grow. `parseConflictName` inverts `conflictCopyName`.
 */

export const maxNameChars = 255;

export type NameCheck =
  | { readonly ok: true }
  | { readonly ok: false; readonly problem: 'name-invalid' | 'name-too-long'; readonly message: string };

/** Length in characters (code points), which is how Box counts. */
export function nameChars(name: string): number {
  let n = 0;
  for (const _ of name) n++;
  return n;
}

export function checkBoxName(name: string): NameCheck {
  if (name.length === 0) return { ok: false, problem: 'name-invalid', message: 'Box does not accept an empty name' };
  if (nameChars(name) > maxNameChars) {
    return { ok: false, problem: 'name-too-long', message: `Box accepts names of at most ${maxNameChars} characters; rename it to sync it` };
  }
  if (name === '.' || name === '..') return { ok: false, problem: 'name-invalid', message: `Box does not accept the name "${name}"; rename it to sync it` };
  if (name.includes('/') || name.includes('\\')) {
    return { ok: false, problem: 'name-invalid', message: 'Box does not accept "/" or "\\" in names; rename it to sync it' };
  }
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) {
      return { ok: false, problem: 'name-invalid', message: 'Box does not accept control characters in names; rename it to sync it' };
    }
  }
  if (name.endsWith(' ')) return { ok: false, problem: 'name-invalid', message: 'Box does not accept names ending with a space; rename it to sync it' };
  return { ok: true };
}

/** Split a name into stem and extension ('.txt'); dot-files and names ending in '.' have no extension. */
export function splitExtension(name: string): { readonly stem: string; readonly ext: string } {
  const i = name.lastIndexOf('.');
  if (i <= 0 || i === name.length - 1) return { stem: name, ext: '' };
  return { stem: name.slice(0, i), ext: name.slice(i) };
}

export interface ConflictName {
  /** The name the copy was made from (without any marker). */
  readonly original: string;
  /** The marker's time, epoch ms (whole seconds, UTC). */
  readonly atMs: number;
  /** 1 for the first copy of that second, 2.. when the plain name was taken. */
  readonly counter: number;
}

const marker = / \(conflicted copy (\d{4})-(\d{2})-(\d{2}) (\d{2})(\d{2})(\d{2})(?: (\d+))?\)$/;

/** Parse a conflict-copy name; null when the name carries no marker. */
export function parseConflictName(name: string): ConflictName | null {
  const split = splitExtension(name);
  // A name without a real extension may still contain a dot before the marker ("v1.2 (conflicted copy …)").
  const { stem, ext } = marker.test(split.stem) ? split : { stem: name, ext: '' };
  const hit = marker.exec(stem);
  if (!hit) return null;
  const [, y, mo, d, h, mi, s, n] = hit;
  const atMs = epochMsFromUtc(Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(s));
  return { original: stem.slice(0, hit.index) + ext, atMs, counter: n === undefined ? 1 : Number(n) };
}

/**
 * The conflict-copy name for `name` at `nowMs`. `isTaken` says whether a candidate is already in use (compare
 * with core/paths foldKey); the counter grows until a free name is found. The stem is shortened when the
 * result would exceed Box's 255-character limit.
 */
export function conflictCopyName(name: string, nowMs: number, isTaken: (candidate: string) => boolean = () => false): string {
  const parsed = parseConflictName(name);
  const base = parsed ? parsed.original : name;
  const { stem, ext } = splitExtension(base);
  const stamp = utcStamp(nowMs);
  for (let counter = 1; ; counter++) {
    const tag = ` (conflicted copy ${stamp}${counter === 1 ? '' : ` ${counter}`})`;
    const room = maxNameChars - nameChars(tag) - nameChars(ext);
    const candidate = truncateChars(stem, room) + tag + ext;
    if (!isTaken(candidate)) return candidate;
  }
}

function truncateChars(s: string, maxChars: number): string {
  if (nameChars(s) <= maxChars) return s;
  return Array.from(s).slice(0, Math.max(1, maxChars)).join('');
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

/** `YYYY-MM-DD HHMMSS` in UTC, computed arithmetically (no Date, no time zone). */
export function utcStamp(epochMs: number): string {
  const totalSec = Math.floor(epochMs / 1000);
  const days = Math.floor(totalSec / 86400);
  const secOfDay = totalSec - days * 86400;
  const { y, m, d } = civilFromDays(days);
  const h = Math.floor(secOfDay / 3600);
  const mi = Math.floor((secOfDay % 3600) / 60);
  const s = secOfDay % 60;
  return `${pad(y, 4)}-${pad(m)}-${pad(d)} ${pad(h)}${pad(mi)}${pad(s)}`;
}

// Howard Hinnant's days_from_civil / civil_from_days: exact proleptic Gregorian arithmetic.
function civilFromDays(z0: number): { y: number; m: number; d: number } {
  const z = z0 + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return { y: yoe + era * 400 + (m <= 2 ? 1 : 0), m, d };
}

function daysFromCivil(y0: number, m: number, d: number): number {
  const y = m <= 2 ? y0 - 1 : y0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function epochMsFromUtc(y: number, mo: number, d: number, h: number, mi: number, s: number): number {
  return ((daysFromCivil(y, mo, d) * 24 + h) * 60 + mi) * 60_000 + s * 1000;
}
