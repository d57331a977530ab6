/**
 * How deep a mirror may go: what a Linux path can hold. PURE.
 *
 * Linux refuses a path of PATH_MAX (4096) bytes or more, the terminating NUL included, so an absolute path holds
 * at most 4095 bytes. boxsync keeps 64 more bytes free for its own temporary names (core `.boxsync-tmp-...`,
 * about 31 bytes) written beside an item. So an item is synced only while its absolute local path
 * (`<mirror root>/<path in the root>`) is at most MAX_LOCAL_PATH_BYTES (4031) bytes. A folder listed deeper than
 * that is parked and never listed, so a Box tree with no bottom (every folder holding one more folder) ends
 * there. Every level takes at least 2 bytes (`/` and a one-byte name), so no mirror is deeper than
 * MAX_TREE_DEPTH levels, which is also the bound of every walk up the parents of a remote row.
 */

export const PATH_MAX_BYTES = 4096;
/** Room kept for boxsync's own temporary names beside an item. */
export const TEMP_NAME_RESERVE_BYTES = 64;
/** The longest absolute local path boxsync syncs: 4096 - 1 (the NUL) - 64 = 4031 bytes. */
export const MAX_LOCAL_PATH_BYTES = PATH_MAX_BYTES - 1 - TEMP_NAME_RESERVE_BYTES;
/** Levels below `/` that MAX_LOCAL_PATH_BYTES can hold at two bytes a level, rounded up: the bound of parent walks. */
export const MAX_TREE_DEPTH = 2048;

/** Bytes of a name (or a path) in UTF-8, as the file system counts them. */
export function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** Bytes of `<parent>/<name>` when the parent's absolute path takes `parentBytes`. */
export function childPathBytes(parentBytes: number, name: string): number {
  return parentBytes + 1 + byteLength(name);
}

/** Why an item whose absolute local path takes `bytes` is not synced, or null when it fits. */
export function pathTooLong(bytes: number): string | null {
  if (bytes <= MAX_LOCAL_PATH_BYTES) return null;
  return (
    `its local path would take ${bytes} bytes, more than the ${MAX_LOCAL_PATH_BYTES} a mirror allows ` +
    `(Linux PATH_MAX is ${PATH_MAX_BYTES} bytes, and ${TEMP_NAME_RESERVE_BYTES} are kept for temporary names); it is not listed or synced`
  );
}
