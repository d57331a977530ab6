/**
 * What a parked item waits for (docs/reliability.md, "Parked items"). PURE.
 *
 * - 'item': the item itself cannot be synced as it is (a name Box refuses, a local name that is not UTF-8, a
 *   symlink): it waits for the item to change (a rename, an edit), or for `boxsync retry`.
 * - 'condition': something around the item stops it, and that can clear without the item changing (permissions,
 *   a disk that was full, a name too long for this file system, a case clash, a lock on Box, an I/O error): it is
 *   re-checked on every `sync --once` and full rescan, and with backoff in the daemon.
 */
export type ParkClass = 'item' | 'condition';

/**
 * The code of a local name that is not valid UTF-8. It is parked under its name as escapeText shows it, with each
 * byte that is not UTF-8 as \\xNN (local/scan.ts escapedNameBytes): that path is already escaped
 * (engine/remote-listing.ts shownFailurePath prints it as it is).
 */
export const LOCAL_NAME_NOT_UTF8 = 'local_name_not_utf8';

/** Codes (of SyncErrors and of the planner's reports) whose park waits for the item itself to change. */
const ITEM_CODES: ReadonlySet<string> = new Set([
  'name-invalid',
  'name-too-long',
  'name_invalid',
  'symlink',
  'special-file',
  'type-change-blocked',
  'remote_item_invalid',
  'file_too_large',
  'bad_request',
  LOCAL_NAME_NOT_UTF8,
  // A user's file named like a boxsync temp file (engine/observe-local.ts): it waits to be renamed.
  'temp_name_reserved',
]);

export function parkClassOf(code: string): ParkClass {
  return ITEM_CODES.has(code) ? 'item' : 'condition';
}

/**
 * Conditions found on this disk: re-checked against a probe of the item and its folder (engine/park-recheck.ts).
 * The others (a lock or a permission on Box, a full quota) have nothing local to look at and are simply tried again.
 */
const LOCAL_CONDITION_CODES: ReadonlySet<string> = new Set(['permission_denied', 'name_too_long', 'local_io', 'case-clash', 'unicode-clash']);

export function probedLocally(code: string): boolean {
  return LOCAL_CONDITION_CODES.has(code);
}
