/**
 * Classification of file system errors into SyncErrors, once, at the adapter boundary: the engine branches on
 * the disposition, never on errno.
 */
import { constants } from 'node:os';
import { isSyncError, SyncError } from '../core/errors.js';

export interface FsErrorContext {
  /** What we were doing, as a verb phrase: "writing a temp file for", "moving", "trashing". */
  readonly action: string;
  /** The root-relative (or absolute) path concerned. */
  readonly path: string;
}

/** errno numbers (from a native call) to their names. */
const ERRNO_NAMES = new Map<number, string>(Object.entries(constants.errno).map(([name, n]) => [n, name]));

/** An Error carrying the errno's name as `code` (ENOSPC, ENOENT, ...), as Node's own errors do. */
export function errnoError(errno: number, what: string): Error & { code: string } {
  const code = ERRNO_NAMES.get(errno) ?? `E${errno}`;
  return Object.assign(new Error(`${what}: ${code}`), { code });
}

export function errnoOf(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export function classifyFsError(e: unknown, ctx: FsErrorContext): SyncError {
  if (isSyncError(e)) return e;
  const errno = errnoOf(e);
  const what = `${ctx.action} ${ctx.path}`;
  const make = (code: string, disposition: SyncError['disposition'], next: string): SyncError =>
    new SyncError({ code, disposition, message: `${what} failed (${errno ?? 'error'}); ${next}`, details: { errno, path: ctx.path }, cause: e });
  switch (errno) {
    case 'ENOSPC':
    case 'EDQUOT':
      return make('disk_full', 'fatal', 'the disk is full: sync stops, nothing was replaced; free some space and start boxsync again');
    case 'EROFS':
      return make('read_only_fs', 'fatal', 'the file system is read-only: sync stops; remount it read-write and start boxsync again');
    case 'EACCES':
    case 'EPERM':
      return make('permission_denied', 'skip', 'permission denied: this item is skipped until its permissions change');
    case 'ENAMETOOLONG':
      return make('name_too_long', 'skip', 'the name is too long for this file system: this item is skipped');
    case 'ENOENT':
    case 'ENOTDIR':
    case 'EEXIST':
    case 'ENOTEMPTY':
    case 'EISDIR':
      return make('local_changed', 'replan', 'the folder changed meanwhile: it will be re-scanned and planned again');
    default:
      return make('local_io', 'retry', 'will retry later');
  }
}
