/**
 * Parks for what a local scan could not read (docs/reliability.md, "One bad entry never stops a scan"): a folder
 * it could not list, an entry it could not lstat or hash (EACCES, ENAMETOOLONG, ELOOP, EIO, EINVAL), a name that
 * is not UTF-8. Each is parked at its path ('skip': the planner plans nothing at or below it, so nothing below an
 * unreadable folder is ever read as deleted), with the probe it is re-checked against, marked as the scan's.
 *
 * The scan is its own re-check: a scan park the next scan of the same scope does not raise again is cleared
 * (the folder lists, the file hashes, the name was renamed), unless a folder above it could not be read.
 */
import type { SyncError } from '../core/errors.js';
import type { RelPath, RootId } from '../core/model.js';
import { ancestorsOf, isAncestorOrSelf } from '../core/paths.js';
import type { Journal } from '../ports/journal.js';
import type { LocalFs } from '../ports/local-fs.js';
import { recordOpFailure } from './failures.js';

/** The probe of a scan park starts with this (the rest is LocalFs.probe's). */
export const SCAN_PROBE_PREFIX = 'scan:';

/** The codes of what a re-stat could not read (local/fs-errors.ts): parked like the scan's, not a failed pass. */
export const SCAN_PARK_CODES: ReadonlySet<string> = new Set(['permission_denied', 'name_too_long', 'local_io']);

export const isScanPark = (probe: string | null | undefined): boolean => probe?.startsWith(SCAN_PROBE_PREFIX) === true;

export class ScanParks {
  /** Everything this scan could not read, by path. */
  readonly raised = new Map<RelPath, SyncError>();
  #pending: RelPath[] = [];

  constructor(
    private readonly deps: { readonly journal: Journal; readonly root: RootId; readonly fs: LocalFs; readonly nowMs: () => number },
  ) {}

  /** ScanOptions.onUnreadable. */
  readonly onUnreadable = (path: RelPath, error: SyncError): void => {
    this.raised.set(path, error);
    this.#pending.push(path);
  };

  /** Write the parks raised since the last flush: after the batch that wrote their entries (a changed entry clears its park). */
  async flush(): Promise<void> {
    if (this.#pending.length === 0) return;
    const paths = this.#pending;
    this.#pending = [];
    const { journal, root, fs } = this.deps;
    const probes = await Promise.all(paths.map((p) => fs.probe?.(p) ?? Promise.resolve('')));
    journal.transaction(() => {
      paths.forEach((path, i) => {
        const error = this.raised.get(path)!;
        recordOpFailure(journal, { root, path, error, nowMs: this.deps.nowMs(), random: Math.random(), probe: `${SCAN_PROBE_PREFIX}${probes[i]}` });
      });
    });
  }

  /** After a complete scan of `scope`: clear the scan parks in it that this scan did not raise again; returns their paths. */
  clearStale(scope: RelPath | ''): RelPath[] {
    const { journal, root } = this.deps;
    const stale = journal
      .failures(root)
      .filter((f) => isScanPark(f.probe) && !this.raised.has(f.path) && (scope === '' || isAncestorOrSelf(scope, f.path)) && !ancestorsOf(f.path).some((a) => this.raised.has(a)));
    if (stale.length > 0) journal.transaction(() => stale.forEach((f) => journal.clearFailure(root, f.path)));
    return stale.map((f) => f.path);
  }
}

/**
 * A sync root that cannot be listed (EACCES, EIO...) stops that root only: parked under '' ("the synced folder
 * itself"), nothing planned for it, the other roots sync. True when `error` was such a scan error and is parked.
 */
export async function parkUnreadableRoot(deps: ConstructorParameters<typeof ScanParks>[0], error: SyncError): Promise<boolean> {
  if (error.disposition === 'fatal' || !SCAN_PARK_CODES.has(error.code)) return false;
  const parks = new ScanParks(deps);
  parks.onUnreadable('' as RelPath, error);
  await parks.flush();
  return true;
}
