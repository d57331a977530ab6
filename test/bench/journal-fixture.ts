/**
 * A mirror as a finished first sync leaves it, built without running that sync (a real first mirror of
 * 1,000,000 files would take hours): the same tree of N small files (50 per folder) in box-server (seeded in
 * this process through its control actor), on disk, and in a journal whose three trees, event cursor, meta
 * and operation history hold exactly the rows the engine writes after mirroring that tree. A `sync --once` on
 * it is a no-change pass: it must plan nothing. test/bench/journal-fixture.test.ts checks the rows against a
 * journal written by a real first mirror of the same tree.
 *
 * How each row is made, as the engine makes it:
 * - remote tree: each item's Box JSON (box-server's own serialization) decoded by the client's decoder
 *   (`checkItem`, as a folder listing decodes its entries); the root's row has no parent;
 * - local tree: `lstat` of the file (inode, size, mtimeMs), the SHA-1 of its content; files carry Box's
 *   content_modified_at as their mtime, as a download sets it. A folder's row is its `lstat` right after it was
 *   created (size 0), before its files were written into it: a first mirror records it then and does not scan
 *   it again, so the no-change pass that follows refreshes one row per folder, as it does after a real mirror;
 * - synced tree: the remote side (etag, sha1, version, size; folders 0) and the local row's inode and mtime;
 * - the `events:changes` cursor from `GET /events?stream_position=now`, `engine.lastSuccessfulSyncAtMs`, and the
 *   last MAX_OPERATION_ROWS operations (create-local-folder, download) with the planner's reasons.
 * What it does not reproduce: the operation history's sequence numbers (they start at 1) and the page layout of
 * the SQLite file (the order of the inserts differs). At 5,000 files the fixture's journal.db was 3 % larger
 * than a real mirror's of the same folder (3.81 vs 3.70 MB), and a no-change `sync --once` measured the same on
 * both (3.3 vs 3.2 s wall, 109 vs 108 MiB peak RSS).
 */
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BoxServer, ServerActor } from '../../src/box-server/index.js';
import { markClean } from '../../src/engine/clean-mark.js';
import { applyScopeChange, configOnlyRules } from '../../src/engine/scope-change.js';
import { ignoreSalt } from '../../src/local/ignore.js';
import { asRelPath, asRemoteId, asRootId, type LocalEntry, type RemoteEntry, type SyncedEntry } from '../../src/core/model.js';
import { rootIdFor } from '../../src/config/root-id.js';
import { MAX_OPERATION_ROWS } from '../../src/journal/operations-table.js';
import { openJournal } from '../../src/journal/open-journal.js';
import { checkItem } from '../../src/remote/box/schemas.js';
import { writeBoxConfig } from '../support/box-config.js';

export const FILES_PER_FOLDER = 50;

export interface SyncedFixture {
  readonly boxFolderId: string;
  readonly mirror: string;
  readonly stateDir: string;
  readonly journalFile: string;
  readonly configFile: string;
  readonly files: number;
  readonly folders: number;
  /** Seconds spent on each part: box-server seeding, the local tree, the journal. */
  readonly seconds: { readonly server: number; readonly local: number; readonly journal: number };
}

export interface FixtureOptions {
  readonly srv: BoxServer;
  readonly token: string;
  /** An empty directory: mirror/, state/, config.json and control.sock go in it. */
  readonly dir: string;
  readonly files: number;
  /** Extra config fields (top level). */
  readonly configExtra?: Readonly<Record<string, unknown>>;
  /** Files a folder (default FILES_PER_FOLDER; the million-file tree of compare.bench.ts has 10). */
  readonly perFolder?: number;
  /** Called each time another 100,000 files are in place (progress for large fixtures). */
  readonly progress?: (files: number) => void;
}

const folderName = (d: number): string => `dir-${String(d).padStart(5, '0')}`;
const fileName = (i: number): string => `file-${String(i).padStart(7, '0')}.txt`;
const fileContent = (i: number): string => `boxsync bench file ${i}\n`;

/** The reasons the planner gives a first mirror's operations (src/core/plan-new.ts). */
const FOLDER_REASON = 'new folder on Box; creating it here';
const FILE_REASON = 'new file on Box; downloading it';

interface Item {
  readonly path: string;
  readonly remote: RemoteEntry;
}

function decoded(web: ServerActor, kind: 'file' | 'folder', id: string, listedIn: string | null): RemoteEntry {
  const json = web.getItem(kind, id);
  const c = checkItem(json, listedIn === null ? { requireName: true } : { requireName: true, listedIn });
  if (!c.ok) throw new Error(`box-server item ${kind} ${id} does not decode: ${JSON.stringify(c)}`);
  return listedIn === null ? { ...c.entry, parentId: null } : c.entry;
}

/** The merge base of a mirrored item: Box's side, and the local row's inode and mtime (a folder's size is 0). */
function syncedOf(remote: RemoteEntry, local: LocalEntry): SyncedEntry {
  return {
    path: local.path,
    remoteId: remote.id,
    kind: remote.kind,
    etag: remote.etag,
    sha1: remote.sha1,
    versionId: remote.versionId,
    sizeBytes: remote.kind === 'folder' ? 0 : remote.sizeBytes,
    inode: local.inode,
    mtimeMs: local.mtimeMs,
    url: remote.url,
  };
}

async function streamPositionNow(srv: BoxServer, token: string): Promise<string> {
  const url = `${srv.apiUrl}/events?stream_type=changes&stream_position=now&limit=0`;
  const get = (): Promise<Response> => fetch(url, { headers: { authorization: `Bearer ${token}` } });
  // A kept-alive connection the server closed as it idled can reset this first request (ECONNRESET, seen when a
  // test built a fixture some seconds after the last one): the GET is asked again once, on a new connection.
  const res = await get().catch(() => get());
  if (!res.ok) throw new Error(`GET /events?stream_position=now answered ${res.status}`);
  return String(((await res.json()) as { next_stream_position: string | number }).next_stream_position);
}

export async function buildSyncedFixture(o: FixtureOptions): Promise<SyncedFixture> {
  const web = o.srv.control.as('1');
  const perFolder = o.perFolder ?? FILES_PER_FOLDER;
  const folders = Math.ceil(o.files / perFolder);
  const mirror = join(o.dir, 'mirror');
  const stateDir = join(o.dir, 'state');
  const journalFile = join(stateDir, 'journal.db');
  const configFile = join(o.dir, 'config.json');
  const seconds = { server: 0, local: 0, journal: 0 };
  const timed = <T>(part: keyof typeof seconds, fn: () => T): T => {
    const t0 = performance.now();
    try {
      return fn();
    } finally {
      seconds[part] += (performance.now() - t0) / 1000;
    }
  };

  const boxFolderId = timed('server', () => web.createFolder('0', `Journal bench ${o.files}`).id);
  const root = asRootId(rootIdFor(boxFolderId, mirror));
  mkdirSync(mirror, { recursive: true });
  const { journal } = openJournal(journalFile);
  try {
    // The operation history keeps the last MAX_OPERATION_ROWS operations of the mirror: every folder was
    // created before the first download, then one download per file.
    const firstKept = Math.max(0, folders + o.files - MAX_OPERATION_ROWS);
    const nowMs = Date.now();
    const recordOp = (index: number, path: string, folder: boolean): void => {
      if (index < firstKept) return;
      journal.recordOperation({ root, path: asRelPath(path), kind: folder ? 'create-local-folder' : 'download', reason: folder ? FOLDER_REASON : FILE_REASON, ok: true, error: null, atMs: nowMs });
    };
    timed('journal', () => journal.transaction(() => {
      for (let d = 0; d < folders; d++) recordOp(d, folderName(d), true);
    }));

    // Folder by folder (memory stays bounded by one batch): box-server, then disk, then the journal.
    const BATCH = 200;
    for (let d0 = 0; d0 < folders; d0 += BATCH) {
      const batch: { folder: Item; files: Item[] }[] = timed('server', () => {
        const out: { folder: Item; files: Item[] }[] = [];
        for (let d = d0; d < Math.min(folders, d0 + BATCH); d++) {
          const name = folderName(d);
          const id = web.createFolder(boxFolderId, name).id;
          const files: Item[] = [];
          for (let i = d * perFolder; i < Math.min(o.files, (d + 1) * perFolder); i++) {
            const f = web.uploadFile(id, fileName(i), fileContent(i));
            files.push({ path: `${name}/${fileName(i)}`, remote: decoded(web, 'file', f.id, id) });
          }
          out.push({ folder: { path: name, remote: decoded(web, 'folder', id, boxFolderId) }, files });
        }
        return out;
      });
      const rows: { item: Item; local: LocalEntry }[] = timed('local', () => {
        const out: { item: Item; local: LocalEntry }[] = [];
        for (const { folder, files } of batch) {
          const dir = join(mirror, folder.path);
          mkdirSync(dir);
          const st = lstatSync(dir);
          out.push({ item: folder, local: { path: asRelPath(folder.path), kind: 'folder', inode: st.ino, sizeBytes: 0, mtimeMs: st.mtimeMs, sha1: null } });
          for (const f of files) {
            const abs = join(mirror, f.path);
            const content = fileContent(Number(/file-(\d+)\.txt$/.exec(f.path)![1]));
            if (createHash('sha1').update(content).digest('hex') !== f.remote.sha1) throw new Error(`box-server holds other content for ${f.path}`);
            writeFileSync(abs, content);
            utimesSync(abs, new Date(), new Date(f.remote.modifiedAtMs));
          }
          for (const f of files) {
            const fst = lstatSync(join(mirror, f.path));
            out.push({ item: f, local: { path: asRelPath(f.path), kind: 'file', inode: fst.ino, sizeBytes: fst.size, mtimeMs: fst.mtimeMs, sha1: f.remote.sha1 } });
          }
        }
        return out;
      });
      timed('journal', () => journal.transaction(() => {
        for (const { item, local } of rows) {
          journal.putRemote(item.remote);
          journal.putLocal(root, local);
          journal.putSynced(root, syncedOf(item.remote, local));
          if (item.remote.kind === 'file') recordOp(folders + Number(/file-(\d+)\.txt$/.exec(item.path)![1]), item.path, false);
        }
      }));
      const done = Math.min(o.files, (d0 + BATCH) * perFolder);
      if (Math.floor(done / 100_000) > Math.floor(Math.min(o.files, d0 * perFolder) / 100_000)) o.progress?.(done);
    }

    // What a listing ends with: the root's own row (no parent), then the cursor taken before it, which no event
    // has passed since; and the success mark.
    const rootEntry = timed('server', () => decoded(web, 'folder', boxFolderId, null));
    const syncRoot = { id: root, remoteId: asRemoteId(boxFolderId), localPath: mirror, direction: 'two-way', exclude: [] } as const;
    const cursor = await streamPositionNow(o.srv, o.token);
    timed('journal', () => journal.transaction(() => {
      journal.putRemote(rootEntry);
      journal.setCursor('events:changes', cursor);
      journal.setMeta('engine.lastSuccessfulSyncAtMs', String(Date.now()));
      // A run that converged leaves the root's clean mark (src/engine/clean-mark.ts): the next run plans only
      // what changed.
      markClean(journal, syncRoot, Date.now(), true);
      // The root's identity (engine/root-guard.ts), as the first sync records it.
      const st = lstatSync(mirror);
      journal.setMeta(`rootIdentity:${root}`, JSON.stringify({ dev: String(st.dev), ino: Number(st.ino) }));
      // The salt of the listing marks (engine/observe-local.ts), as a first sync's scan records it (the config's
      // rules, no root marker); no folder is marked yet: the first run after the mirror marks them.
      journal.setMeta(`listing-marks:${root}`, ignoreSalt(configOnlyRules(syncRoot).fingerprint, null));
    }));
    // The rules the root was synced under (engine/scope-change.ts): the same call a first sync makes.
    applyScopeChange({ journal, root: syncRoot, rules: configOnlyRules(syncRoot), isIgnored: () => false, nowMs: Date.now() });
  } finally {
    journal.close();
  }

  await writeBoxConfig(configFile, {
    srv: o.srv,
    token: o.token,
    remoteId: boxFolderId,
    localPath: mirror,
    stateDir,
    socketPath: join(o.dir, 'control.sock'),
    extra: { rateLimit: undefined, ...o.configExtra },
  });
  return { boxFolderId, mirror, stateDir, journalFile, configFile, files: o.files, folders, seconds };
}
