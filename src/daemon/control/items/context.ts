/**
 * What every item command shares: its dependencies, and `resolveItem`, which turns the local path a command
 * starts from into its root (else `outside-root`, exit 4) and the journal's merge-base row (else `not-synced`,
 * exit 5). The Box id comes from that row.
 */
import { resolve } from 'node:path';
import { pairHolding } from '../../../config/folder-pair.js';
import { escapeText } from '../../../core/escape.js';
import { asRelPath, type RelPath, type RemoteId, type SyncRoot, type SyncedEntry } from '../../../core/model.js';
import { reasonText } from '../../../engine/scope-change.js';
import { unselectedAt } from '../../../engine/selective.js';
import type { TrashPlaces } from '../../../local/local-trash-entries.js';
import type { Journal } from '../../../ports/journal.js';
import type { LocalFs } from '../../../ports/local-fs.js';
import type { RemoteStore } from '../../../ports/remote-store.js';
import type { BoxActions } from '../../../remote/box/index.js';
import { ItemCommandError } from '../item-protocol.js';

export interface ItemCommandDeps {
  readonly roots: readonly SyncRoot[];
  readonly journal: Journal;
  readonly remote: RemoteStore;
  readonly actions: BoxActions;
  /** The configured Box API URL (`remote.apiUrl`): it decides the web URL's host. */
  readonly apiUrl: string;
  readonly isIgnoredFor: (root: SyncRoot) => (p: string, isDir: boolean) => boolean;
  /**
   * The disk of each root: `conflicts` looks at copies and `conflicts resolve` copies, renames and trashes them
   * through it (guard-checked; what it drops goes to the same local trash the engine uses).
   */
  readonly localFsFor: (root: SyncRoot) => LocalFs;
  /** Where boxsync's local trash is, for `trash list|restore`. */
  readonly trashPlaces?: TrashPlaces;
  /** The daemon asks for a pass that looks at these Box items (after restore-version); absent on the direct path. */
  readonly hintRemote?: (ids: readonly RemoteId[]) => void;
}

export interface ResolvedItem {
  readonly absPath: string;
  readonly root: SyncRoot;
  /** '' for the root folder itself. */
  readonly relPath: RelPath | '';
  readonly boxId: RemoteId;
  readonly kind: 'file' | 'folder' | 'weblink';
  readonly synced: SyncedEntry | null;
}

/** The root holding an absolute path and the path relative to it; `outside-root` when no root does. */
export function rootAt(roots: readonly SyncRoot[], absPath: string): { readonly root: SyncRoot; readonly relPath: RelPath | '' } {
  const p = resolve(absPath);
  const hit = pairHolding(roots, p);
  if (hit) return { root: hit.pair, relPath: hit.rel === '' ? '' : asRelPath(hit.rel) };
  const list = roots.map((r) => escapeText(r.localPath)).join(', ');
  throw new ItemCommandError('outside-root', `${escapeText(p)} is not inside a synced folder (the roots are: ${list || 'none configured'})`);
}

/** The root, relative path and journal row of an absolute local path. */
export function resolveItem(deps: ItemCommandDeps, absPath: string): ResolvedItem {
  const p = resolve(absPath);
  const { root, relPath } = rootAt(deps.roots, p);
  if (relPath === '') return { absPath: p, root, relPath: '', boxId: root.remoteId, kind: 'folder', synced: null };
  const rel: string = relPath;
  const synced = deps.journal.getSynced(root.id, relPath);
  if (!synced) {
    // Deliberately not synced (selective sync, an exclude rule): say so, not "not synced (yet)".
    const sel = unselectedAt(root, rel);
    const u = deps.journal.unsyncedPaths(root.id).find((x) => rel === x.path || rel.startsWith(`${x.path}/`));
    if (sel !== undefined || u !== undefined) {
      const why = sel !== undefined ? `not selected (selective sync: ${escapeText(sel)} is in folders[].selective.unselected; \`boxsync selective include ${escapeText(sel)}\` brings it back)` : `excluded by ${reasonText(u!.reason)}`;
      throw new ItemCommandError('not-synced', `${escapeText(p)} is not synced: ${why}`);
    }
    throw new ItemCommandError(
      'not-synced',
      `${escapeText(p)} is not synced (yet): boxsync has no Box item for it. If it is new, the next sync uploads it; \`boxsync status ${escapeText(p)}\` says more`,
    );
  }
  return { absPath: p, root, relPath, boxId: synced.remoteId, kind: synced.kind, synced };
}

export function fileOnly(it: ResolvedItem, what: string): ResolvedItem & { kind: 'file' } {
  if (it.kind !== 'file') throw new ItemCommandError('failed', `${escapeText(it.absPath)} is a ${it.kind}; Box can only ${what} files`);
  return it as ResolvedItem & { kind: 'file' };
}

export function gone(it: ResolvedItem): ItemCommandError {
  return new ItemCommandError('not-synced', `${escapeText(it.absPath)}: its Box item ${escapeText(it.boxId)} is gone or in the trash; the next sync takes that in`);
}
