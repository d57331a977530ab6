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
 * the SQLite file (rows are inserted in key order, where the engine's page-by-page commits leave some pages
 * less full, so the real file may be somewhat larger).
 */
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BoxServer } from '../../src/box-server/index.js';
import { asRelPath, asRootId, type LocalEntry, type RemoteEntry, type SyncedEntry } from '../../src/core/model.js';
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
  /** Called every 100,000 files with the count so far (progress for large fixtures). */
  readonly progress?: (what: string, done: number) => void;
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

function decoded(srv: BoxServer, kind: 'file' | 'folder', id: string, listedIn: string | null): RemoteEntry {
  const json = srv.control.as('1').getItem(kind, id);
  const c = checkItem(json, listedIn === null ? { requireName: true } : { requireName: true, listedIn });
  if (!c.ok) throw new Error(`box-server item ${kind} ${id} does not decode: ${JSON.stringify(c)}`);
  return listedIn === null ? { ...c.entry, parentId: null } : c.entry;
}

async function streamPositionNow(srv: BoxServer, token: string): Promise<string> {
  const url = `${srv.apiUrl}/events?stream_type=changes&stream_position=now&limit=0`;
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) throw new Error(`GET /events?stream_position=now answered ${res.status}`);
  return String(((await res.json()) as { next_stream_position: string | number }).next_stream_position);
}

export async function buildSyncedFixture(o: FixtureOptions): Promise<SyncedFixture> {
  const web = o.srv.control.as('1');
  const folders = Math.ceil(o.files / FILES_PER_FOLDER);
  const mirror = join(o.dir, 'mirror');
  const stateDir = join(o.dir, 'state');
  const journalFile = join(stateDir, 'journal.db');
  const configFile = join(o.dir, 'config.json');

  // 1. box-server: the tree, then every item as the client decodes it.
  let t0 = performance.now();
  const boxFolderId = web.createFolder('0', `Journal bench ${o.files}`).id;
  const folderItems: Item[] = [];
  const fileItems: Item[] = [];
  for (let d = 0, i = 0; d < folders; d++) {
    const name = folderName(d);
    const id = web.createFolder(boxFolderId, name).id;
    for (let k = 0; k < FILES_PER_FOLDER && i < o.files; k++, i++) {
      web.uploadFile(id, fileName(i), fileContent(i));
      if ((i + 1) % 100_000 === 0) o.progress?.('box-server', i + 1);
    }
  }
  const rootEntry = decoded(o.srv, 'folder', boxFolderId, null);
  for (const f of web.listFolder(boxFolderId)) {
    folderItems.push({ path: f.name, remote: decoded(o.srv, 'folder', f.id, boxFolderId) });
    for (const c of web.listFolder(f.id)) fileItems.push({ path: `${f.name}/${c.name}`, remote: decoded(o.srv, 'file', c.id, f.id) });
  }
  const cursor = await streamPositionNow(o.srv, o.token);
  const serverSec = (performance.now() - t0) / 1000;

  // 2. The local tree, as downloads leave it; lstat gives the rows' local side.
  t0 = performance.now();
  mkdirSync(mirror, { recursive: true });
  const folderCreated = new Map<string, { inode: number; mtimeMs: number }>();
  for (const f of folderItems) {
    const abs = join(mirror, f.path);
    mkdirSync(abs);
    const st = lstatSync(abs);
    folderCreated.set(f.path, { inode: st.ino, mtimeMs: st.mtimeMs });
  }
  const local = new Map<string, LocalEntry>();
  let written = 0;
  for (const f of fileItems) {
    const abs = join(mirror, f.path);
    const i = Number(/file-(\d+)\.txt$/.exec(f.path)![1]);
    const content = fileContent(i);
    if (createHash('sha1').update(content).digest('hex') !== f.remote.sha1) throw new Error(`box-server holds other content for ${f.path}`);
    writeFileSync(abs, content);
    utimesSync(abs, new Date(), new Date(f.remote.modifiedAtMs));
    if (++written % 100_000 === 0) o.progress?.('local tree', written);
  }
  for (const f of fileItems) {
    const st = lstatSync(join(mirror, f.path));
    local.set(f.path, { path: asRelPath(f.path), kind: 'file', inode: st.ino, sizeBytes: st.size, mtimeMs: st.mtimeMs, sha1: f.remote.sha1 });
  }
  for (const f of folderItems) {
    const created = folderCreated.get(f.path)!;
    local.set(f.path, { path: asRelPath(f.path), kind: 'folder', inode: created.inode, sizeBytes: 0, mtimeMs: created.mtimeMs, sha1: null });
  }
  const localSec = (performance.now() - t0) / 1000;

  // 3. The journal.
  t0 = performance.now();
  const root = asRootId(rootIdFor(boxFolderId, mirror));
  const { journal } = openJournal(journalFile);
  try {
    const synced = (item: Item): SyncedEntry => {
      const l = local.get(item.path)!;
      const isFolder = item.remote.kind === 'folder';
      return {
        path: asRelPath(item.path),
        remoteId: item.remote.id,
        kind: item.remote.kind,
        etag: item.remote.etag,
        sha1: item.remote.sha1,
        versionId: item.remote.versionId,
        sizeBytes: isFolder ? 0 : item.remote.sizeBytes,
        inode: l.inode,
        mtimeMs: l.mtimeMs,
        url: item.remote.url,
      };
    };
    const all = [...folderItems, ...fileItems];
    const CHUNK = 20_000;
    journal.transaction(() => journal.putRemote(rootEntry));
    for (let at = 0; at < all.length; at += CHUNK) {
      journal.transaction(() => {
        for (const item of all.slice(at, at + CHUNK)) {
          journal.putRemote(item.remote);
          journal.putLocal(root, local.get(item.path)!);
          journal.putSynced(root, synced(item));
        }
      });
      o.progress?.('journal', Math.min(all.length, at + CHUNK));
    }
    journal.transaction(() => {
      const history = all.slice(-MAX_OPERATION_ROWS);
      const nowMs = Date.now();
      for (const item of history) {
        const folder = item.remote.kind === 'folder';
        journal.recordOperation({ root, path: asRelPath(item.path), kind: folder ? 'create-local-folder' : 'download', reason: folder ? FOLDER_REASON : FILE_REASON, ok: true, error: null, atMs: nowMs });
      }
      journal.setCursor('events:changes', cursor);
      journal.setMeta('engine.lastSuccessfulSyncAtMs', String(Date.now()));
    });
  } finally {
    journal.close();
  }
  const journalSec = (performance.now() - t0) / 1000;

  await writeBoxConfig(configFile, {
    srv: o.srv,
    token: o.token,
    remoteId: boxFolderId,
    localPath: mirror,
    stateDir,
    socketPath: join(o.dir, 'control.sock'),
    extra: { rateLimit: undefined, ...o.configExtra },
  });
  return { boxFolderId, mirror, stateDir, journalFile, configFile, files: o.files, folders, seconds: { server: serverSec, local: localSec, journal: journalSec } };
}
