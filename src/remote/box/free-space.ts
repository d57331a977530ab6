/**
 * The free-space check before a download: room for the file plus a reserve (the journal and other files need some
 * too), or the download is refused before any request with a retryable `disk_full`.
 *
 * Free space by folder is read with statfs at most once a second per folder (by the adapter's clock) and counted
 * down by every download it admits meanwhile (2,000 small downloads made 2,000 statfs calls). It is read again
 * whenever the estimate comes near the reserve, so a filling disk is still seen in time. One FreeSpace per Box
 * adapter: adapters (and tests) do not share readings.
 */
import { dirname } from 'node:path';
import { SyncError } from '../../core/errors.js';
import type { Clock } from '../../ports/clock.js';

/** Room kept free on the disk beside a download. */
export const FREE_SPACE_RESERVE = 64 * 1024 * 1024;
const FREE_SPACE_TTL_MS = 1000;
/** Folders remembered before the readings are dropped (one per download folder of a tree). */
const MAX_DIRS = 1000;

/** Free bytes of the file system holding `dir`, for this process's user. Throws when it cannot say. */
export type ReadFreeBytes = (dir: string) => Promise<number>;

export class FreeSpace {
  private readonly byDir = new Map<string, { atMs: number; free: number }>();

  constructor(
    private readonly clock: Clock,
    private readonly readFree?: ReadFreeBytes,
  ) {}

  /**
   * Admit a download of `bytes` to `destPath` (counted down from the estimate), or throw `disk_full`. The reading
   * comes from the constructor's `readFree`, else from `ownFree` (the download's TempFile.freeBytes: the disk is
   * asked through the LocalFs port); with neither, every download is admitted.
   */
  async admit(id: string, destPath: string, bytes: number, ownFree?: () => Promise<number>): Promise<void> {
    const readFree: ReadFreeBytes | undefined = this.readFree ?? ownFree;
    if (readFree === undefined) return;
    const dir = dirname(destPath);
    const now = this.clock.now();
    let known = this.byDir.get(dir);
    if (known === undefined || now - known.atMs > FREE_SPACE_TTL_MS || known.free < bytes + 2 * FREE_SPACE_RESERVE) {
      try {
        known = { atMs: now, free: await readFree(dir) };
      } catch {
        return; // a file system that cannot say: the write itself reports a full disk
      }
      if (this.byDir.size > MAX_DIRS) this.byDir.clear();
      this.byDir.set(dir, known);
    }
    const free = known.free;
    if (free < bytes + FREE_SPACE_RESERVE) {
      throw new SyncError({
        code: 'disk_full',
        disposition: 'retry',
        message: `not enough free space to download file ${id} (${bytes} bytes needed, ${free} free, ${FREE_SPACE_RESERVE} kept in reserve); skipped for now, will retry with backoff. Free some space`,
        details: { id, neededBytes: bytes, freeBytes: free },
      });
    }
    known.free -= bytes;
  }
}
