/**
 * Seeing journal damage while boxsync runs.
 *
 * openJournal does not read the whole file at every start (see its clean mark), so damage that happened after a
 * clean close (a bad disk sector) can first show up as SQLITE_CORRUPT on some query in the middle of a pass. This
 * wrapper routes every call of the journal (and of the objects it exposes, and of the iterators it returns)
 * through one check: a damage error is reported once to `onDamage` (the journal is then not marked clean at close,
 * so the next open checks it and sets it aside) and thrown on as a fatal SyncError that says what happens next.
 * Any other error passes through untouched.
 */
import { SyncError } from '../core/errors.js';

/** SQLite error codes that mean "this file is damaged or not ours", as opposed to "cannot write here". */
export const DAMAGED_CODES: ReadonlySet<string> = new Set(['SQLITE_CORRUPT', 'SQLITE_NOTADB', 'SQLITE_CORRUPT_VTAB', 'SQLITE_CORRUPT_SEQUENCE', 'SQLITE_CORRUPT_INDEX']);

export function damageCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && DAMAGED_CODES.has(code) ? code : undefined;
}

/** The fatal error for a journal found damaged while in use; `finding` says how ("is damaged (SQLITE_CORRUPT: ...)"). */
export function journalDamaged(path: string, finding: string, cause: unknown): SyncError {
  return new SyncError({
    code: 'journal_damaged',
    disposition: 'fatal',
    message:
      `the journal ${path} ${finding}; syncing stops without touching any files. ` +
      'The next start sets the damaged file aside and rebuilds the journal with a full rescan and listing (the daemon under systemd restarts by itself)',
    details: { path },
    cause,
  });
}

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));

type AnyFn = (...args: unknown[]) => unknown;

function isIterator(v: unknown): v is IterableIterator<unknown> {
  return typeof v === 'object' && v !== null && typeof (v as { next?: unknown }).next === 'function' && Symbol.iterator in v;
}

/**
 * An object with the same methods as `target` (own prototype chain, and the objects in its own properties), each
 * calling the target's and reporting damage. Not a Proxy: the methods are built once, so a call costs one extra
 * function call and a try.
 */
export function watchDamage<T extends object>(target: T, path: string, onDamage: (e: unknown) => void): T {
  const fail = (e: unknown): never => {
    if (e instanceof SyncError || damageCode(e) === undefined) throw e;
    onDamage(e);
    throw journalDamaged(path, `is damaged (${damageCode(e)}: ${messageOf(e)})`, e);
  };
  const iterate = (it: IterableIterator<unknown>): IterableIterator<unknown> => {
    const wrapped: IterableIterator<unknown> = {
      next: (...args: [] | [unknown]) => {
        try {
          return it.next(...args);
        } catch (e) {
          return fail(e);
        }
      },
      return: (value?: unknown) => it.return?.(value) ?? { done: true, value },
      [Symbol.iterator]: () => wrapped,
    };
    return wrapped;
  };
  const out: Record<string, unknown> = {};
  for (let proto = Object.getPrototypeOf(target) as object | null; proto !== null && proto !== Object.prototype; proto = Object.getPrototypeOf(proto) as object | null) {
    for (const key of Object.getOwnPropertyNames(proto)) {
      if (key === 'constructor' || key in out) continue;
      const fn = Object.getOwnPropertyDescriptor(proto, key)?.value as unknown;
      if (typeof fn !== 'function') continue;
      out[key] = (...args: unknown[]): unknown => {
        let result: unknown;
        try {
          result = (fn as AnyFn).apply(target, args);
        } catch (e) {
          return fail(e);
        }
        return isIterator(result) ? iterate(result) : result;
      };
    }
  }
  for (const [key, value] of Object.entries(target)) {
    out[key] = typeof value === 'object' && value !== null ? watchDamage(value, path, onDamage) : value;
  }
  return out as T;
}
