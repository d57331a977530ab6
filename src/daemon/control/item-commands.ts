/**
 * ItemCommands: the one implementation of the item commands (info, share, unshare, lock, unlock, versions,
 * restore-version, history). The daemon runs it behind its control socket (verb `item`), with its own journal
 * and Box client; the CLI runs the same class directly, under the state lock, when no daemon answers. So the
 * journal stays the single source of truth either way.
 *
 * Every command starts from a local path: `resolveItem` finds its root (else `outside-root`, exit 4) and the
 * journal's merge-base row (else `not-synced`, exit 5); the Box id comes from that row. Box errors become
 * ItemCommandErrors with their exit code (locked by another user 6, credentials refused 7, anything else 1).
 * Everything that came from Box or disk is escaped before it reaches a message.
 */
import { unselectedAt } from '../../engine/selective.js';
import { reasonText } from '../../engine/scope-change.js';
import { copyFile, lstat, rename } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { isSyncError } from '../../core/errors.js';
import { escapeText, safeText } from '../../core/escape.js';
import { asRelPath, type RelPath, type RemoteId, type SyncRoot, type SyncedEntry } from '../../core/model.js';
import { parseConflictName, splitExtension } from '../../core/names.js';
import { isAncestorOrSelf } from '../../core/paths.js';
import type { LocalTrash } from '../../local/local-trash.js';
import { listLocalTrash, restoreLocalTrashEntry, type TrashPlaces } from '../../local/local-trash-entries.js';
import { remotePathOf } from '../../engine/remote-tree.js';
import type { Journal } from '../../ports/journal.js';
import type { RemoteStore } from '../../ports/remote-store.js';
import type { BoxActions, ItemLock, SharedLinkInfo } from '../../remote/box/index.js';
import {
  ItemCommandError,
  type ConflictView,
  type ConflictsResult,
  type TrashEntryView,
  type TrashListResult,
  type HistoryResult,
  type ItemInfoResult,
  type ItemRequest,
  type LockView,
  type MessageResult,
  type SharedLinkView,
  type ShareResult,
  type VersionsResult,
} from './item-protocol.js';
import { pathStatus } from './path-status.js';

export interface ItemCommandDeps {
  readonly roots: readonly SyncRoot[];
  readonly journal: Journal;
  readonly remote: RemoteStore;
  readonly actions: BoxActions;
  /** The configured Box API URL (`remote.apiUrl`): it decides the web URL's host. */
  readonly apiUrl: string;
  readonly isIgnoredFor: (root: SyncRoot) => (p: string, isDir: boolean) => boolean;
  /** Where `conflicts resolve` puts the copy it drops (the same local trash the engine uses). */
  readonly localTrash?: LocalTrash;
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

export type ItemResult = ItemInfoResult | ShareResult | MessageResult | VersionsResult | HistoryResult | ConflictsResult | TrashListResult;

export class ItemCommands {
  constructor(private readonly deps: ItemCommandDeps) {}

  async run(req: ItemRequest): Promise<ItemResult> {
    try {
      return await this.dispatch(req);
    } catch (e) {
      throw toItemError(e);
    }
  }

  /** The Box lock of a synced file (null: none, or not a synced file). For `boxsync status PATH`. */
  async lockAt(absPath: string): Promise<LockView | null> {
    let it: ResolvedItem;
    try {
      it = this.resolveItem(absPath);
    } catch {
      return null;
    }
    if (it.kind !== 'file') return null;
    const info = await this.deps.actions.itemInfo(it.boxId, 'file');
    return info?.lock ? this.lockView(info.lock) : null;
  }

  /** The root, relative path and journal row of an absolute local path. */
  resolveItem(absPath: string): ResolvedItem {
    const p = resolve(absPath);
    const root = this.rootOf(p);
    const rel = relative(root.localPath, p);
    if (rel === '') return { absPath: p, root, relPath: '', boxId: root.remoteId, kind: 'folder', synced: null };
    const relPath = asRelPath(rel);
    const synced = this.deps.journal.getSynced(root.id, relPath);
    if (!synced) {
      // Deliberately not synced (selective sync, an exclude rule): say so, not "not synced (yet)".
      const sel = unselectedAt(root, rel);
      const u = this.deps.journal.unsyncedPaths(root.id).find((x) => rel === x.path || rel.startsWith(`${x.path}/`));
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

  private rootOf(p: string): SyncRoot {
    for (const r of this.deps.roots) {
      const rel = relative(r.localPath, p);
      if (!rel.startsWith('..') && !isAbsolute(rel)) return r;
    }
    const list = this.deps.roots.map((r) => escapeText(r.localPath)).join(', ');
    throw new ItemCommandError('outside-root', `${escapeText(p)} is not inside a synced folder (the roots are: ${list || 'none configured'})`);
  }

  private async dispatch(req: ItemRequest): Promise<ItemResult> {
    switch (req.command) {
      case 'info':
        return this.info(req.path);
      case 'share':
        return this.share(req);
      case 'unshare': {
        const it = this.resolveItem(req.path);
        await this.deps.actions.removeSharedLink(it.boxId, shareKind(it));
        return { path: it.absPath, message: `${escapeText(it.absPath)}: shared link removed` };
      }
      case 'lock': {
        const it = this.fileOnly(this.resolveItem(req.path), 'lock');
        await this.refuseOthersLock(it);
        const lock = await this.deps.actions.lock(it.boxId, {
          ...(req.expiresAtMs === undefined ? {} : { expiresAtMs: req.expiresAtMs }),
          ...(req.preventDownload === undefined ? {} : { preventDownload: req.preventDownload }),
        });
        const until = lock?.expiresAtMs ? ` until ${new Date(lock.expiresAtMs).toISOString()}` : '';
        const dl = lock?.isDownloadPrevented ? '; others cannot download it' : '';
        return { path: it.absPath, message: `${escapeText(it.absPath)}: locked${until}${dl}` };
      }
      case 'unlock': {
        const it = this.fileOnly(this.resolveItem(req.path), 'unlock');
        await this.refuseOthersLock(it);
        await this.deps.actions.unlock(it.boxId);
        return { path: it.absPath, message: `${escapeText(it.absPath)}: unlocked` };
      }
      case 'versions':
        return this.versions(req.path);
      case 'restore-version': {
        const it = this.fileOnly(this.resolveItem(req.path), 'restore a version of');
        await this.refuseOthersLock(it);
        const known = await this.deps.actions.listVersions(it.boxId);
        if (!known.some((v) => v.id === req.versionId)) {
          throw new ItemCommandError('failed', `${escapeText(it.absPath)} has no earlier version ${escapeText(req.versionId)}; \`boxsync versions ${escapeText(it.absPath)}\` lists them`);
        }
        await this.deps.actions.promoteVersion(it.boxId, req.versionId);
        this.deps.hintRemote?.([it.boxId]);
        const next = this.deps.hintRemote ? 'the daemon brings it down now' : 'the next sync (`boxsync sync --once`, or the daemon) brings it down';
        return { path: it.absPath, message: `${escapeText(it.absPath)}: version ${escapeText(req.versionId)} is the current one on Box again; ${next}` };
      }
      case 'history':
        return this.history(req);
      case 'conflicts':
        return { conflicts: await this.conflicts(req.path) };
      case 'trash-list':
        return { entries: (await this.trashEntries(req.path)).map(({ restore: _r, ...view }) => view) };
      case 'trash-restore':
        return this.trashRestore(req);
      case 'conflicts-resolve':
        return this.resolveConflict(req.path, req.keep);
      default: {
        const never: never = req;
        throw new ItemCommandError('fatal', `unknown item command ${JSON.stringify(never)}`);
      }
    }
  }

  private fileOnly(it: ResolvedItem, what: string): ResolvedItem & { kind: 'file' } {
    if (it.kind !== 'file') throw new ItemCommandError('failed', `${escapeText(it.absPath)} is a ${it.kind}; Box can only ${what} files`);
    return it as ResolvedItem & { kind: 'file' };
  }

  /** Another user's lock: a clear refusal (exit 6) before Box refuses with less to say. */
  private async refuseOthersLock(it: ResolvedItem): Promise<void> {
    const info = await this.deps.actions.itemInfo(it.boxId, it.kind);
    if (!info) throw gone(it);
    const lock = info.lock ? await this.lockView(info.lock) : null;
    if (lock && !lock.ours) {
      throw new ItemCommandError('locked-by-other', `${escapeText(it.absPath)} is locked by another Box user (id ${escapeText(lock.byUserId ?? 'unknown')}); only they can change or unlock it`);
    }
  }

  private async info(absPath: string): Promise<ItemInfoResult> {
    const it = this.resolveItem(absPath);
    const info = await this.deps.actions.itemInfo(it.boxId, it.kind);
    if (!info) throw gone(it);
    const status = await pathStatus(it.absPath, {
      roots: this.deps.roots,
      journal: this.deps.journal,
      ops: { get: () => null },
      isIgnoredFor: this.deps.isIgnoredFor,
    });
    const e = info.entry;
    return {
      path: it.absPath,
      root: it.root.id,
      rootPath: it.root.localPath,
      relPath: it.relPath,
      kind: e.kind,
      boxId: e.id,
      etag: e.etag,
      versionId: e.versionId,
      sizeBytes: e.sizeBytes,
      sha1: e.sha1,
      state: status.state,
      stateDetail: status.detail,
      lock: info.lock ? await this.lockView(info.lock) : null,
      sharedLink: info.sharedLink ? linkView(info.sharedLink) : null,
      webUrl: webUrlOf(this.deps.apiUrl, e.kind, e.id),
      lastOperation: it.relPath === '' ? null : (this.deps.journal.lastOperation(it.root.id, it.relPath) ?? null),
    };
  }

  private async share(req: Extract<ItemRequest, { command: 'share' }>): Promise<ShareResult> {
    const it = this.resolveItem(req.path);
    if (req.password !== undefined && req.access !== undefined && req.access !== 'open') {
      throw new ItemCommandError('failed', `a password can only protect a link with --access open (Box's rule); nothing was changed`);
    }
    if (req.password !== undefined && req.password.length < 8) {
      throw new ItemCommandError('failed', 'Box needs a shared-link password of at least 8 characters; nothing was changed');
    }
    let link: SharedLinkInfo;
    try {
      link = await this.deps.actions.createSharedLink(it.boxId, shareKind(it), {
        ...(req.access === undefined ? (req.password === undefined ? {} : { access: 'open' as const }) : { access: req.access }),
        ...(req.password === undefined ? {} : { password: req.password }),
        ...(req.expiresAtMs === undefined ? {} : { unsharedAtMs: req.expiresAtMs }),
        ...(req.noDownload ? { canDownload: false } : {}),
      });
    } catch (e) {
      if (isSyncError(e) && (req.password !== undefined || req.expiresAtMs !== undefined) && ['bad_request', 'forbidden', 'invalid_request'].includes(e.code)) {
        const what = [req.password !== undefined ? 'a password' : null, req.expiresAtMs !== undefined ? 'an expiry date' : null].filter(Boolean).join(' and ');
        throw new ItemCommandError(
          'failed',
          `Box refused ${what} for this shared link (${safeText(e.message)}). Free and personal Box accounts cannot set passwords or expiry dates, and a password needs --access open; nothing was changed`,
        );
      }
      throw e;
    }
    const view = linkView(link);
    return { path: it.absPath, url: view.url, printed: view.url, link: view };
  }

  private async versions(absPath: string): Promise<VersionsResult> {
    const it = this.fileOnly(this.resolveItem(absPath), 'keep versions of');
    const info = await this.deps.actions.itemInfo(it.boxId, 'file');
    if (!info) throw gone(it);
    const past = await this.deps.actions.listVersions(it.boxId);
    const current = {
      id: info.entry.versionId ?? '(current)',
      current: true,
      sizeBytes: info.entry.sizeBytes,
      sha1: info.entry.sha1,
      modifiedAtMs: info.entry.modifiedAtMs,
      by: null,
    };
    const older = past
      .filter((v) => v.trashedAtMs === null && v.id !== current.id)
      .map((v) => ({ id: v.id, current: false, sizeBytes: v.sizeBytes, sha1: v.sha1, modifiedAtMs: v.modifiedAtMs ?? v.createdAtMs, by: v.modifiedBy?.login ?? v.modifiedBy?.name ?? null }))
      .sort((a, b) => (b.modifiedAtMs ?? 0) - (a.modifiedAtMs ?? 0));
    return { path: it.absPath, boxId: it.boxId, versions: [current, ...older] };
  }

  private history(req: Extract<ItemRequest, { command: 'history' }>): HistoryResult {
    const byRoot = new Map(this.deps.roots.map((r) => [r.id, r]));
    let scope: { root: SyncRoot; relPath: RelPath | '' } | null = null;
    if (req.path !== undefined) {
      const p = resolve(req.path);
      const root = this.rootOf(p);
      // History is kept for paths that are gone too: no journal row is needed.
      scope = { root, relPath: relative(root.localPath, p) === '' ? '' : asRelPath(relative(root.localPath, p)) };
    }
    const rows = this.deps.journal.operations({
      ...(scope ? { root: scope.root.id, ...(scope.relPath === '' ? {} : { path: scope.relPath }) } : {}),
      ...(req.sinceMs === undefined ? {} : { sinceMs: req.sinceMs }),
      limit: req.limit ?? 1000,
    });
    return {
      entries: rows
        .filter((r) => byRoot.has(r.root))
        .map((r) => ({ ...r, localPath: `${byRoot.get(r.root)!.localPath}/${r.path}` })),
    };
  }

  /**
   * The conflict copies that exist now: the journal's local tree names them (a copy's name carries its marker,
   * core/names.ts), and each is checked on disk, so one the user deleted or renamed since the last pass is not
   * listed. The Box side is the item at the original name, as last observed.
   */
  private async conflicts(scopePath?: string): Promise<ConflictView[]> {
    let roots = this.deps.roots;
    let under: RelPath | '' = '';
    if (scopePath !== undefined) {
      const p = resolve(scopePath);
      const root = this.rootOf(p);
      roots = [root];
      under = relative(root.localPath, p) === '' ? '' : asRelPath(relative(root.localPath, p));
    }
    const out: ConflictView[] = [];
    for (const root of roots) {
      for (const e of this.deps.journal.localUnder(root.id, '')) {
        if (e.kind !== 'file' || (under !== '' && !isAncestorOrSelf(under, e.path))) continue;
        const parsed = parseConflictName(basename(e.path));
        if (!parsed) continue;
        const copyPath = join(root.localPath, e.path);
        const st = await lstat(copyPath).catch(() => null);
        if (!st?.isFile()) continue;
        const dir = dirname(e.path);
        const originalRel = asRelPath(dir === '.' ? parsed.original : `${dir}/${parsed.original}`);
        const synced = this.deps.journal.getSynced(root.id, originalRel);
        const r = synced ? this.deps.journal.getRemote(synced.remoteId) : undefined;
        out.push({
          copyPath,
          originalPath: join(root.localPath, originalRel),
          madeAtMs: parsed.atMs,
          local: { sizeBytes: st.size, mtimeMs: st.mtimeMs },
          remote: r ? { boxId: r.id, sizeBytes: r.sizeBytes, modifiedAtMs: r.modifiedAtMs } : null,
        });
      }
    }
    return out.sort((a, b) => a.copyPath.localeCompare(b.copyPath));
  }

  /** Both trashes, newest first, limited to the roots (or to one path and what was below it). */
  private async trashEntries(scopePath?: string): Promise<(TrashEntryView & { restore: (to: { dir?: string; name?: string }) => Promise<string> })[]> {
    const scope = scopePath === undefined ? null : resolve(scopePath);
    if (scope !== null) this.rootOf(scope);
    const inScope = (abs: string): boolean => {
      const r = this.deps.roots.find((root) => !relative(root.localPath, abs).startsWith('..') && !isAbsolute(relative(root.localPath, abs)) && relative(root.localPath, abs) !== '');
      if (!r) return false;
      if (scope === null) return true;
      const rel = relative(scope, abs);
      return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
    };
    const out: (TrashEntryView & { restore: (to: { dir?: string; name?: string }) => Promise<string> })[] = [];
    for (const t of await this.deps.actions.listTrash()) {
      if (t.parentId === null) continue;
      for (const root of this.deps.roots) {
        const parent = remotePathOf(this.deps.journal, root, t.parentId);
        if (parent === null) continue;
        const name = t.kind === 'weblink' ? `${t.name}.url` : t.name;
        const abs = join(root.localPath, parent, name);
        if (!inScope(abs)) break;
        out.push({
          source: 'box',
          id: t.id,
          path: abs,
          kind: t.kind,
          sizeBytes: t.sizeBytes,
          trashedAtMs: t.trashedAtMs,
          restore: async (to) => {
            if (t.kind === 'weblink') throw new ItemCommandError('failed', `${escapeText(abs)} is a Box web link; restore it on box.com`);
            const parentId = to.dir === undefined ? undefined : this.folderIdOf(to.dir);
            const e = await this.deps.actions.restoreFromTrash(t.id, t.kind, { ...(to.name === undefined ? {} : { name: to.name }), ...(parentId === undefined ? {} : { parentId }) });
            this.deps.hintRemote?.([t.id, ...(e.parentId ? [e.parentId] : [])]);
            return `restored Box ${t.kind} ${t.id} from the Box trash (same id)`;
          },
        });
        break;
      }
    }
    if (this.deps.trashPlaces) {
      const places = this.deps.trashPlaces;
      for (const l of await listLocalTrash(places)) {
        if (!inScope(l.originalPath)) continue;
        out.push({
          source: 'local',
          id: l.id,
          path: l.originalPath,
          kind: l.kind,
          sizeBytes: l.sizeBytes,
          trashedAtMs: l.trashedAtMs,
          restore: async (to) => {
            const target = join(to.dir === undefined ? dirname(l.originalPath) : resolve(to.dir), to.name ?? basename(l.originalPath));
            this.rootOf(target);
            try {
              await restoreLocalTrashEntry(places, l, target);
            } catch (e) {
              if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw clash(target);
              throw e;
            }
            return `restored ${escapeText(target)} from the local trash`;
          },
        });
      }
    }
    return out.sort((a, b) => (b.trashedAtMs ?? 0) - (a.trashedAtMs ?? 0));
  }

  /** The Box id of a synced folder (or a root), for `trash restore --to DIR`. */
  private folderIdOf(dir: string): RemoteId {
    const it = this.resolveItem(dir);
    if (it.kind !== 'folder') throw new ItemCommandError('failed', `${escapeText(it.absPath)} is not a folder`);
    return it.boxId;
  }

  /**
   * Restore one item. By id: that entry. By path: the newest entry that was there, preferring the Box trash
   * (a Box restore keeps the item's id, versions and shared links; the sync brings it down) over the local one.
   */
  private async trashRestore(req: Extract<ItemRequest, { command: 'trash-restore' }>): Promise<MessageResult> {
    const all = await this.trashEntries();
    const id = /^box:/.test(req.target) ? req.target.slice(4) : req.target;
    let entry = all.find((e) => e.id === id);
    if (!entry && isAbsolute(req.target)) {
      const p = resolve(req.target);
      this.rootOf(p);
      const there = all.filter((e) => e.path === p);
      entry = there.find((e) => e.source === 'box') ?? there[0];
    }
    if (!entry) {
      throw new ItemCommandError('not-synced', `nothing in the Box trash or the local trash matches ${escapeText(req.target)} under the synced folders; \`boxsync trash list\` shows what is there`);
    }
    let done: string;
    try {
      done = await entry.restore({ ...(req.to === undefined ? {} : { dir: req.to }), ...(req.name === undefined ? {} : { name: req.name }) });
    } catch (e) {
      if (isSyncError(e) && e.code === 'item_name_in_use') throw clash(req.name ?? entry.path);
      throw e;
    }
    const next = entry.source === 'box' ? (this.deps.hintRemote ? 'the daemon brings it down now' : 'the next sync brings it down') : this.deps.hintRemote ? 'the daemon uploads it now' : 'the next sync uploads it';
    return { path: entry.path, message: `${done}; ${next}` };
  }

  /** Settle one conflict: PATH is the copy, or the original when it has exactly one copy. */
  private async resolveConflict(path: string, keep: 'local' | 'remote' | 'both'): Promise<MessageResult> {
    const p = resolve(path);
    const root = this.rootOf(p);
    let copy: string;
    if (parseConflictName(basename(p))) {
      copy = p;
    } else {
      const copies = (await this.conflicts(dirname(p))).filter((c) => c.originalPath === p);
      if (copies.length === 0) throw new ItemCommandError('failed', `${escapeText(p)} has no conflict copy (\`boxsync conflicts\` lists them)`);
      if (copies.length > 1) {
        throw new ItemCommandError('failed', `${escapeText(p)} has ${copies.length} conflict copies; name the one to settle: ${copies.map((c) => escapeText(c.copyPath)).join(', ')}`);
      }
      copy = copies[0]!.copyPath;
    }
    const st = await lstat(copy).catch(() => null);
    if (!st?.isFile()) throw new ItemCommandError('failed', `${escapeText(copy)} does not exist (any more); nothing to settle`);
    const original = join(dirname(copy), parseConflictName(basename(copy))!.original);
    const next = this.deps.hintRemote ? 'the daemon syncs it now' : 'the next sync takes it to Box';
    const relOf = (abs: string): RelPath => asRelPath(relative(root.localPath, abs));
    const trash = async (abs: string): Promise<string> => {
      if (!this.deps.localTrash) throw new ItemCommandError('fatal', 'no local trash is configured here; nothing was changed');
      return this.deps.localTrash.trash(abs, relOf(abs));
    };
    switch (keep) {
      case 'remote': {
        const where = await trash(copy);
        return { path: copy, message: `kept the Box version of ${escapeText(original)}; your copy went to the local trash (${escapeText(where)}); ${next}` };
      }
      case 'local': {
        if (await lstat(original).catch(() => null)) {
          // In place (same inode): the sync sees an edit of the original and uploads it as a new version, so Box
          // keeps the version it had as an earlier one.
          await copyFile(copy, original);
          await trash(copy);
        } else {
          await rename(copy, original);
        }
        return { path: original, message: `kept your version as ${escapeText(original)} (Box keeps its version as an earlier one); ${next}` };
      }
      case 'both': {
        const { stem, ext } = splitExtension(basename(original));
        let target = '';
        for (let n = 2; ; n++) {
          target = join(dirname(copy), `${stem} (${n})${ext}`);
          if (!(await lstat(target).catch(() => null))) break;
        }
        await rename(copy, target);
        return { path: target, message: `kept both: the Box version as ${escapeText(original)}, yours as ${escapeText(target)}; ${next}` };
      }
      default: {
        const never: never = keep;
        throw new ItemCommandError('fatal', `unknown choice ${String(never)}`);
      }
    }
  }

  private async lockView(lock: ItemLock): Promise<LockView> {
    const me = await this.deps.remote.account();
    return {
      ours: lock.createdByUserId === null || lock.createdByUserId === me.userId,
      byUserId: lock.createdByUserId,
      expiresAtMs: lock.expiresAtMs,
      preventDownload: lock.isDownloadPrevented,
    };
  }
}

function clash(what: string): ItemCommandError {
  return new ItemCommandError('failed', `something named ${escapeText(basename(what))} is already there; nothing was restored. Pick another name with --name NEW (or another folder with --to DIR)`);
}

function shareKind(it: ResolvedItem): 'file' | 'folder' {
  if (it.kind === 'weblink') throw new ItemCommandError('failed', `${escapeText(it.absPath)} is a Box web link; boxsync shares files and folders`);
  return it.kind;
}

function gone(it: ResolvedItem): ItemCommandError {
  return new ItemCommandError('not-synced', `${escapeText(it.absPath)}: its Box item ${escapeText(it.boxId)} is gone or in the trash; the next sync takes that in`);
}

function linkView(l: SharedLinkInfo): SharedLinkView {
  return { url: l.url, downloadUrl: l.downloadUrl, access: l.access, passwordEnabled: l.isPasswordEnabled, expiresAtMs: l.unsharedAtMs };
}

/** `https://app.box.com/file/ID` for the real Box; the same path on the configured server otherwise. */
export function webUrlOf(apiUrl: string, kind: 'file' | 'folder' | 'weblink', id: string): string {
  const segment = kind === 'weblink' ? 'web_link' : kind;
  let origin: string;
  try {
    const u = new URL(apiUrl);
    origin = u.hostname === 'api.box.com' ? 'https://app.box.com' : u.origin;
  } catch {
    origin = 'https://app.box.com';
  }
  return `${origin}/${segment}/${encodeURIComponent(id)}`;
}

/** Box and journal errors as item command errors, with the exit code their kind picks. */
export function toItemError(e: unknown): ItemCommandError {
  if (e instanceof ItemCommandError) return e;
  if (isSyncError(e)) {
    const msg = safeText(e.message);
    if (e.code === 'locked') return new ItemCommandError('locked-by-other', `${msg}; only the user who locked it can change or unlock it`);
    if (e.code === 'auth_revoked' || e.code === 'unauthorized') return new ItemCommandError('auth', `${msg}; run \`boxsync login\` (or set a fresh developer token)`);
    return new ItemCommandError(e.disposition === 'fatal' ? 'fatal' : 'failed', msg);
  }
  return new ItemCommandError('failed', safeText(e instanceof Error ? e.message : String(e)));
}
