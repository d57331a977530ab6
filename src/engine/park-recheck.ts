/**
 * Parked items clear themselves once their cause is gone (docs/reliability.md, "Parked items").
 *
 * A park on a *condition* (core/park-class.ts: permissions, a name too long here, a case clash, a lock, an I/O
 * error...) is re-checked:
 * - on every `sync --once` and full rescan ('all'): a park with a probe is cleared when the item or its folder
 *   changed since (two lstats: LocalFs.probe); one without a probe (nothing local to look at: a case clash, a
 *   lock on Box) is cleared, so the run tries it again. The scan's own parks are re-checked by the scan itself
 *   (scan-parks.ts) and left alone here.
 * - in the daemon's hinted passes ('due'): the same probe comparison, and any condition park whose backoff
 *   elapsed (nextRetryAtMs, core/retry.ts itemBackoff) is cleared, so a cause no probe sees (space freed, a lock
 *   released) is still retried, less and less often.
 * A cleared park is planned again in the same run; if its cause is still there it fails and is parked again.
 * A park on the *item itself* (a name Box refuses) waits for the item to change, or for `boxsync retry`.
 *
 * `retryParks` is `boxsync retry [PATH]`: it clears the rows so the next pass (or the daemon's, at once) plans
 * them again.
 */
import { parkClassOf } from '../core/park-class.js';
import type { RelPath, RootId, SyncRoot } from '../core/model.js';
import { isAncestorOrSelf } from '../core/paths.js';
import type { FailureRecord, Journal } from '../ports/journal.js';
import type { LocalFs } from '../ports/local-fs.js';
import { INCOMPLETE_CODE, REJECTED_CODE } from './remote-listing.js';
import { isScanPark, SCAN_PROBE_PREFIX } from './scan-parks.js';
import { clearClean } from './clean-mark.js';

/** Parks probed per hinted pass (two lstats each): a pass over a huge parked set stays cheap. */
const MAX_PROBES_PER_PASS = 500;

const isConditionPark = (f: FailureRecord): boolean => f.disposition === 'skip' && (f.parkClass ?? parkClassOf(f.code)) === 'condition';

/** Re-check the condition parks of one root; returns the paths cleared (to be planned again in this run). */
export async function recheckParks(
  deps: { readonly journal: Journal; readonly root: SyncRoot; readonly fs: LocalFs },
  opts: { readonly mode: 'all' | 'due'; readonly nowMs: number },
): Promise<RelPath[]> {
  const { journal, root, fs } = deps;
  const parks = journal.failures(root.id).filter(isConditionPark);
  if (parks.length === 0) return [];
  const cleared: RelPath[] = [];
  let probes = 0;
  for (const f of parks) {
    // The root itself (it could not be listed) is re-checked by the full scan each pass makes of such a root.
    if (f.path === '') continue;
    const scan = isScanPark(f.probe);
    if (opts.mode === 'all' && scan) continue;
    if (opts.mode === 'due' && f.nextRetryAtMs <= opts.nowMs) {
      cleared.push(f.path);
      continue;
    }
    if (f.probe === null || f.probe === undefined || f.probe === '') {
      if (opts.mode === 'all') cleared.push(f.path);
      continue;
    }
    if (fs.probe === undefined || probes >= MAX_PROBES_PER_PASS) continue;
    probes += 1;
    const now = await fs.probe(f.path);
    const was = scan ? f.probe.slice(SCAN_PROBE_PREFIX.length) : f.probe;
    if (now !== was) cleared.push(f.path);
  }
  if (cleared.length > 0) journal.transaction(() => cleared.forEach((p) => journal.clearFailure(root.id, p)));
  return cleared;
}

/** What `boxsync retry` clears: every failed or parked item of the roots, or those at or below `path` in `root`. */
export function retryParks(journal: Journal, roots: readonly SyncRoot[], target?: { readonly root: RootId; readonly path: RelPath | '' }): FailureRecord[] {
  const ours = new Set(roots.map((r) => r.id));
  const rows = journal.failures().filter(
    (f) =>
      ours.has(f.root) &&
      // What a listing refused is listed again by the first pass of every process; clearing it would hide it.
      f.code !== REJECTED_CODE &&
      f.code !== INCOMPLETE_CODE &&
      (target === undefined || (f.root === target.root && isAncestorOrSelf(target.path, f.path))),
  );
  if (rows.length === 0) return rows;
  journal.transaction(() => {
    rows.forEach((f) => journal.clearFailure(f.root, f.path));
    // A run after a converged one plans only what changed (clean-mark.ts), and these did not: the next run plans all.
    for (const root of roots) if (rows.some((f) => f.root === root.id)) clearClean(journal, root);
  });
  return rows;
}
