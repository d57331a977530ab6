/**
 * A change of what is synced is never a delete.
 *
 * The planner reads "a merge-base row whose item is gone on one side" as a deletion to pass on. Rows left behind
 * by a change of scope would be read that way: a folder excluded, deleted here by hand to free the disk, and
 * included again, would be trashed on Box. So a change of scope edits the merge base before anything is planned:
 *
 * - A path that becomes excluded (folders[].exclude, `.boxsyncignore`, boxsync's built-in rules) forgets its
 *   merge base: the synced rows at and below it go, and `unsynced_paths` says why, in one transaction. Nothing is
 *   planned for it: the local copy stays where it is, unsynced, and so does Box's. The user is told once.
 * - A path included again loses its `unsynced_paths` row. With no merge base it is a first sync of that subtree:
 *   what Box has is downloaded, what the disk has is uploaded, two different files at one name are both kept (a
 *   conflict copy), and nothing is deleted on either side.
 * - A change of `direction` forgets the merge base of every item gone on either side (and of everything below
 *   it): under download-only a local deletion is never passed on, under upload-only a Box one is not, so such a
 *   row would become a delete in the new direction. Those items are synced afresh; the rest keep their base
 *   (edits still flow, Box ids and moves are kept).
 * - A folder pair no longer in the config forgets its merge base (forgetRemovedRoots); added back, it is a first
 *   sync.
 *
 * The rules a root was last synced under are kept in the journal's meta (`scope:<root>`): the walk over the merge
 * base runs only when they changed, and such a run plans the whole root (the paths included again are nowhere in
 * what changed since the last run).
 */
import { createHash } from 'node:crypto';
import { escapeText } from '../core/escape.js';
import type { RelPath, RemoteId, RootId, SyncRoot, SyncedEntry } from '../core/model.js';
import { ancestorsOf } from '../core/paths.js';
import type { Journal, UnsyncedRecord } from '../ports/journal.js';
import type { IsIgnored } from './observe-local.js';
import { ignoredAnywhere } from './snapshot.js';
import { addSelecting } from './selective.js';
import type { ScopeRules } from './scope-rules.js';

export type { ScopeRules } from './scope-rules.js';

/** The rules when the composition gives none: the config's exclude list alone. */
export function configOnlyRules(root: SyncRoot): ScopeRules {
  return { fingerprint: fingerprintOf(root.exclude, []), reasonFor: () => 'config-exclude' };
}

export function fingerprintOf(exclude: readonly string[], ignoreFile: readonly string[]): string {
  return createHash('sha1').update(JSON.stringify([exclude, ignoreFile])).digest('hex');
}

/** Notices listed one by one per kind of change; more are counted. */
const MAX_NAMED = 20;

interface StoredScope {
  readonly remoteId: string;
  readonly localPath: string;
  readonly direction: string;
  readonly rules: string;
}

const scopeKey = (root: RootId): string => `scope:${root}`;

function readStored(journal: Pick<Journal, 'getMeta'>, root: RootId): StoredScope | undefined {
  const text = journal.getMeta(scopeKey(root));
  if (text === undefined || text === '') return undefined;
  try {
    const v = JSON.parse(text) as Partial<StoredScope>;
    if ([v.remoteId, v.localPath, v.direction, v.rules].every((x) => typeof x === 'string')) return v as StoredScope;
  } catch {
    // unreadable: as if none was stored (the exclusions are checked again, the direction is kept)
  }
  return undefined;
}

/** The direction a root was last synced under, if the journal knows it. */
export function storedDirection(journal: Pick<Journal, 'getMeta'>, root: RootId): string | undefined {
  return readStored(journal, root)?.direction;
}

const REASON_TEXT: Record<UnsyncedRecord['reason'], string> = {
  'config-exclude': 'the config (folders[].exclude)',
  'ignore-file': '.boxsyncignore',
  'built-in': "boxsync's built-in ignore rules",
  'not-selected': 'selective sync (not selected)',
};

export function reasonText(reason: UnsyncedRecord['reason']): string {
  return REASON_TEXT[reason];
}

export interface ScopeOutcome {
  /** The rules differ from the last run's: plan the whole root. */
  readonly changed: boolean;
  /** What to tell the user, once (names escaped). */
  readonly notices: readonly string[];
  /** Paths that left by selective sync, with the merge base they had: their local copy is freed (selective-free.ts). */
  readonly deselected: readonly Deselected[];
}

/** A path no longer selected, and its merge base (the path and all below it) as it was before it was forgotten. */
export interface Deselected {
  readonly path: RelPath;
  readonly kind: SyncedEntry['kind'];
  readonly base: ReadonlyMap<RelPath, SyncedEntry>;
}

/**
 * Bring the merge base of a root in line with its current scope before it is planned. Run after the local scan
 * and the remote observation (a direction change reads both trees).
 */
export function applyScopeChange(args: { journal: Journal; root: SyncRoot; rules: ScopeRules; isIgnored: IsIgnored; nowMs: number }): ScopeOutcome {
  const { journal, root } = args;
  const prev = readStored(journal, root.id);
  const next: StoredScope = { remoteId: root.remoteId, localPath: root.localPath, direction: root.direction, rules: args.rules.fingerprint };
  if (prev !== undefined && JSON.stringify(prev) === JSON.stringify(next)) return { changed: false, notices: [], deselected: [] };
  const notices: string[] = [];
  const deselected: Deselected[] = [];
  journal.transaction(() => {
    // Without a stored scope (a new root, or a journal from before this rule) the exclusions are checked anyway:
    // a base row below an ignored path could only ever turn into a delete.
    if (prev === undefined || prev.rules !== next.rules) notices.push(...exclusionsChanged(args, deselected));
    if (prev !== undefined && prev.direction !== next.direction) notices.push(...directionChanged(journal, root, prev.direction));
    journal.setMeta(scopeKey(root.id), JSON.stringify(next));
  });
  return { changed: true, notices, deselected };
}

function exclusionsChanged(args: { journal: Journal; root: SyncRoot; rules: ScopeRules; isIgnored: IsIgnored; nowMs: number }, deselected: Deselected[]): string[] {
  const { journal, root, rules, isIgnored, nowMs } = args;
  const anywhere = ignoredAnywhere(isIgnored);
  const leaving = topmostWhere(journal, root.id, (s) => anywhere(s.path, s.kind === 'folder'));
  const failures = leaving.length > 0 ? journal.failures(root.id) : [];
  const left: string[] = [];
  for (const s of leaving) {
    // The rule that excludes it may name a folder above it.
    const top = ancestorsOf(s.path).reverse().find((a) => isIgnored(a, true)) ?? s.path;
    const reason = rules.reasonFor(top, top !== s.path || s.kind === 'folder');
    if (reason === 'not-selected') deselected.push({ path: s.path, kind: s.kind, base: new Map([s, ...journal.syncedUnder(root.id, s.path)].map((r) => [r.path, r])) });
    journal.deleteSyncedSubtree(root.id, s.path);
    journal.putUnsynced({ root: root.id, path: s.path, reason, kind: s.kind, sinceMs: nowMs });
    for (const f of failures) if (f.path === s.path || f.path.startsWith(`${s.path}/`)) journal.clearFailure(root.id, f.path);
    if (reason === 'not-selected') {
      left.push(`${escapeText(s.path)}${s.kind === 'folder' ? '/' : ''} is no longer selected (selective sync): Box keeps it, and its local copy is freed once it holds nothing Box lacks`);
      continue;
    }
    left.push(`${escapeText(s.path)}${s.kind === 'folder' ? '/' : ''} is now excluded by ${reasonText(reason)}: the local copy stays where it is and is no longer synced (boxsync does not remove it; delete it yourself to free the space), and Box keeps its copy`);
  }
  const back: string[] = [];
  for (const u of journal.unsyncedPaths(root.id)) {
    if (!anywhere(u.path, u.kind === 'folder')) {
      journal.deleteUnsynced(root.id, u.path);
      if (u.reason === 'not-selected') {
        addSelecting(journal, root.id, u.path);
        back.push(`${escapeText(u.path)}${u.kind === 'folder' ? '/' : ''} is selected again: it is downloaded for selective sync (what the disk still has is kept, nothing is deleted)`);
        continue;
      }
      back.push(`${escapeText(u.path)}${u.kind === 'folder' ? '/' : ''} is included again: it is synced afresh (what Box has comes down, what the disk has goes up, different files at one name are both kept); nothing is deleted`);
    } else {
      const top = ancestorsOf(u.path).reverse().find((a) => isIgnored(a, true)) ?? u.path;
      const reason = rules.reasonFor(top, top !== u.path || u.kind === 'folder');
      if (reason !== u.reason) journal.putUnsynced({ ...u, reason });
    }
  }
  return [...named(left), ...named(back)];
}

function directionChanged(journal: Journal, root: SyncRoot, from: string): string[] {
  const sameKind = (kind: string, s: SyncedEntry): boolean => (kind === 'folder') === (s.kind === 'folder');
  const localGone = (s: SyncedEntry): boolean => {
    const l = journal.getLocal(root.id, s.path);
    if (l !== undefined && sameKind(l.kind, s)) return false;
    const moved = journal.localByInode(root.id, s.inode);
    return !(moved !== undefined && sameKind(moved.kind, s));
  };
  // Gone on Box: not active, or no longer below the root (moved out, or in a trashed folder). Answers per folder
  // are remembered, so the walk up costs one lookup per folder, not one per row and ancestor.
  const present = new Map<RemoteId, boolean>([[root.remoteId, true]]);
  const isPresent = (id: RemoteId, depth = 0): boolean => {
    const known = present.get(id);
    if (known !== undefined) return known;
    const r = journal.getRemote(id);
    const yes = r !== undefined && r.status === 'active' && r.parentId !== null && depth < 1000 && isPresent(r.parentId, depth + 1);
    if (r?.kind === 'folder') present.set(id, yes);
    return yes;
  };
  const remoteGone = (s: SyncedEntry): boolean => !isPresent(s.remoteId);
  const gone = topmostWhere(journal, root.id, (s) => localGone(s) || remoteGone(s));
  for (const s of gone) journal.deleteSyncedSubtree(root.id, s.path);
  const head = `the direction changed from ${from} to ${root.direction}`;
  if (gone.length === 0) return [`${head}: nothing was waiting to be deleted on either side`];
  const names = gone.slice(0, MAX_NAMED).map((s) => escapeText(s.path));
  const more = gone.length > MAX_NAMED ? ` and ${gone.length - MAX_NAMED} more` : '';
  return [
    `${head}: ${gone.length} item${gone.length === 1 ? '' : 's'} gone on one side meanwhile (${names.join(', ')}${more}) ${gone.length === 1 ? 'is' : 'are'} synced afresh instead of deleted: a change of direction is never a delete`,
  ];
}

/** The merge-base rows matching `test` with no matching ancestor row, in path order. */
function topmostWhere(journal: Journal, root: RootId, test: (s: SyncedEntry) => boolean): SyncedEntry[] {
  const out: SyncedEntry[] = [];
  const taken = new Set<RelPath>();
  for (const s of journal.syncedUnder(root, '')) {
    if (taken.size > 0 && ancestorsOf(s.path).some((a) => taken.has(a))) continue;
    if (!test(s)) continue;
    out.push(s);
    if (s.kind === 'folder') taken.add(s.path);
  }
  return out;
}

function named(lines: readonly string[]): string[] {
  if (lines.length <= MAX_NAMED) return [...lines];
  return [...lines.slice(0, MAX_NAMED), `... and ${lines.length - MAX_NAMED} more paths changed scope the same way (boxsync status lists them)`];
}

/**
 * Forget the merge base of every root that has one in the journal and is no longer configured: added back, such a
 * pair is a first sync (nothing deleted on either side), not a comparison with a base from before it left.
 */
export function forgetRemovedRoots(journal: Journal, roots: readonly SyncRoot[]): string[] {
  const configured = new Set<RootId>(roots.map((r) => r.id));
  const notices: string[] = [];
  for (const id of journal.syncedRoots()) {
    if (configured.has(id)) continue;
    const was = readStored(journal, id);
    const n = journal.countSynced(id);
    journal.transaction(() => {
      journal.forgetRoot(id);
      // No stored scope: when the pair comes back its first run plans the whole root (applyScopeChange).
      journal.setMeta(scopeKey(id), '');
    });
    const what = was === undefined ? `root ${id}` : `${escapeText(was.localPath)} <-> Box folder ${escapeText(was.remoteId)}`;
    notices.push(
      `the folder pair ${what} is no longer in the config: its sync state (${n.files} files, ${n.folders} folders) is forgotten; nothing is deleted on either side, and adding the pair back syncs it afresh`,
    );
  }
  return notices;
}
