/**
 * `boxsync retry [PATH]`: try failed and parked items again now (engine/park-recheck.ts retryParks). The command
 * itself is src/cli/commands/retry.ts; this is what it shares with the daemon's `retry` verb.
 *
 * When a daemon runs, it is asked over the control socket: it clears the items' rows and runs a pass for them at
 * once. Otherwise the rows are cleared in the journal directly (under the state-dir lock, as `sync --once` takes
 * it), and the next run plans them again. An item whose cause is still there fails again and is parked again.
 * Items a Box listing refused are not cleared: every process's first pass lists them again anyway.
 */
import { pairHolding } from '../../config/folder-pair.js';
import { escapeText } from '../../core/escape.js';
import { LOCAL_NAME_NOT_UTF8 } from '../../core/park-class.js';
import { shownFailurePath } from '../../engine/remote-listing.js';
import { parentOf } from '../../core/paths.js';
import { asRelPath, type RelPath, type RootId, type SyncRoot } from '../../core/model.js';
import type { FailureRecord } from '../../ports/journal.js';

export interface RetryTarget {
  readonly root: RootId;
  readonly path: RelPath | '';
}

/** The root and root-relative path of an absolute path; null when it is in no root. */
export function retryTarget(roots: readonly SyncRoot[], absPath: string): RetryTarget | null {
  const hit = pairHolding(roots, absPath);
  return hit === null ? null : { root: hit.pair.id, path: hit.rel === '' ? '' : asRelPath(hit.rel) };
}

/** What both ways print: "N items to try again WHEN:" and the items (at most 20). */
export function retriedText(rows: readonly FailureRecord[], when: string, path: string | undefined): string {
  if (rows.length === 0) return path === undefined ? 'no item is failed or parked; nothing to retry' : `no failed or parked item at ${escapeText(path)}; nothing to retry`;
  const shown = rows.slice(0, 20).map((f) => `  ${f.path === '' ? '(the synced folder itself)' : shownFailurePath(f.code, f.path)} (${f.code})`);
  const more = rows.length > 20 ? [`  … and ${rows.length - 20} more`] : [];
  return [`${rows.length} item${rows.length === 1 ? '' : 's'} to try again ${when}:`, ...shown, ...more].join('\n');
}

/**
 * The paths a daemon pass must look at to try these rows again: the path itself, or for a name that is not UTF-8
 * (its key names no file) its folder, whose rescan raises it again. '' (the root) means a full pass.
 */
export function retryHints(rows: readonly FailureRecord[]): { readonly root: RootId; readonly path: RelPath | '' }[] {
  return rows.map((f) => ({ root: f.root, path: f.code === LOCAL_NAME_NOT_UTF8 ? parentOf(f.path) : f.path }));
}
