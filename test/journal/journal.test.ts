import { statSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asRelPath as p, asRemoteId as rid, asRootId } from '../../src/core/model.js';
import { openJournal } from '../../src/journal/open-journal.js';
import { LOCAL_TREE_SQL } from '../../src/journal/local-tree.js';
import { byInodeSql } from '../../src/journal/path-table.js';
import { SYNCED_TREE_SQL } from '../../src/journal/synced-tree.js';
import type { Journal } from '../../src/ports/journal.js';
import { makeTempDir } from '../support/tmp.js';
import { localFile, localFolder, remoteItem, synced } from './entries.js';

const R = asRootId('root-a');
const R2 = asRootId('root-b');

let tmp: { dir: string; cleanup: () => Promise<void> };
let j: Journal;
let dbPath: string;

beforeEach(async () => {
  tmp = await makeTempDir('boxsync-journal-');
  dbPath = join(tmp.dir, 'state', 'journal.db');
  j = openJournal(dbPath).journal;
});
afterEach(async () => {
  j.close();
  await tmp.cleanup();
});

const paths = (it: Iterable<{ path: string }>): string[] => [...it].map((e) => e.path);

describe('rows read as arrays (pages, children) decode field for field like rows read one at a time', () => {
  it('local and synced trees, every field set', () => {
    const l = localFile('d/f.txt', { inode: 77, sizeBytes: 123, mtimeMs: 1_700_000_000_456.25, sha1: 'ab'.repeat(20) });
    const s = synced('d/f.txt', '9', { kind: 'file', etag: '3', sha1: 'cd'.repeat(20), versionId: 'v5', sizeBytes: 456, inode: 78, mtimeMs: 1_700_000_001_000.5, url: null });
    const w = synced('d/w.url', '10', { kind: 'weblink', etag: '1', sha1: null, versionId: null, sizeBytes: 0, inode: 79, mtimeMs: 2, url: 'https://example.com/x' });
    j.transaction(() => {
      j.putLocal(R, localFolder('d', 5));
      j.putLocal(R, l);
      j.putSynced(R, s);
      j.putSynced(R, w);
    });
    expect(j.getLocal(R, p('d/f.txt'))).toEqual(l);
    expect(j.localChildren(R, p('d'))).toEqual([l]);
    expect([...j.localUnder(R, '')]).toEqual([localFolder('d', 5), l]);
    expect(j.getSynced(R, p('d/f.txt'))).toEqual(s);
    expect(j.syncedChildren(R, p('d'))).toEqual([s, w]);
    expect([...j.syncedUnder(R, p('d'))]).toEqual([s, w]);
  });
});

describe('local tree', () => {
  it('round-trips an entry exactly, per root', () => {
    const e = localFile('a/b.txt', { inode: 77, sizeBytes: 123, mtimeMs: 1_700_000_000_456.25, sha1: 'ab'.repeat(20) });
    j.putLocal(R, e);
    expect(j.getLocal(R, p('a/b.txt'))).toEqual(e);
    expect(j.getLocal(R2, p('a/b.txt'))).toBeUndefined();
    expect(j.localByInode(R, 77)).toEqual(e);
    expect(j.localByInode(R2, 77)).toBeUndefined();
    j.deleteLocal(R, p('a/b.txt'));
    expect(j.getLocal(R, p('a/b.txt'))).toBeUndefined();
  });

  it('lists a subtree without its prefix-sharing siblings', () => {
    for (const x of ['docs', 'docs/a', 'docs/sub/b', 'docs copy', 'docs copy/x', 'docs.txt', 'docs-2', 'docs0', 'docsy/z', 'other']) {
      j.putLocal(R, localFile(x));
    }
    j.putLocal(R2, localFile('docs/elsewhere'));
    expect(paths(j.localUnder(R, p('docs')))).toEqual(['docs/a', 'docs/sub/b']);
    expect(paths(j.localUnder(R, ''))).toHaveLength(10);
    expect(paths(j.localUnder(R2, ''))).toEqual(['docs/elsewhere']);
  });

  it('pages through a tree larger than one page, and allows writes while iterating', () => {
    j.transaction(() => {
      for (let i = 0; i < 2500; i++) j.putLocal(R, localFile(`big/f${String(i).padStart(5, '0')}`, { inode: i }));
    });
    let n = 0;
    for (const e of j.localUnder(R, p('big'))) {
      n++;
      j.putLocal(R, { ...e, sha1: null });
    }
    expect(n).toBe(2500);
    expect(j.getLocal(R, p('big/f02499'))?.sha1).toBeNull();
  });

  it('moves a folder with its descendants and nothing else, replacing stale rows at the target', () => {
    for (const x of ['a', 'a/1', 'a/s/2', 'a.txt', 'a b/3', 'ab']) j.putLocal(R, localFile(x));
    j.putLocal(R, localFile('z/stale'));
    j.putLocal(R, localFile('z'));
    j.moveLocalSubtree(R, p('a'), p('z'));
    expect(paths(j.localUnder(R, ''))).toEqual(['a b/3', 'a.txt', 'ab', 'z', 'z/1', 'z/s/2']);
  });

  it('moves paths with characters outside the BMP correctly', () => {
    j.putLocal(R, localFolder('😀dir', 1));
    j.putLocal(R, localFile('😀dir/é.txt'));
    j.moveLocalSubtree(R, p('😀dir'), p('ünï😀'));
    expect(paths(j.localUnder(R, ''))).toEqual(['ünï😀', 'ünï😀/é.txt']);
  });

  it('refuses a move into its own subtree', () => {
    j.putLocal(R, localFile('a'));
    expect(() => j.moveLocalSubtree(R, p('a'), p('a/b'))).toThrow(/contains/);
    expect(paths(j.localUnder(R, ''))).toEqual(['a']);
  });

  it('deletes a subtree and nothing else', () => {
    for (const x of ['a', 'a/1', 'a/s/2', 'a.txt', 'a0']) j.putLocal(R, localFile(x));
    j.putLocal(R2, localFile('a/1'));
    j.deleteLocalSubtree(R, p('a'));
    expect(paths(j.localUnder(R, ''))).toEqual(['a.txt', 'a0']);
    expect(paths(j.localUnder(R2, ''))).toEqual(['a/1']);
  });
});

describe('synced tree', () => {
  it('keeps one row per Box item: writing it at a new path drops the old one', () => {
    j.putSynced(R, synced('old', 'f1'));
    j.putSynced(R, synced('new', 'f1', { etag: '2' }));
    expect(j.getSynced(R, p('old'))).toBeUndefined();
    expect(j.syncedByRemoteId(R, rid('f1'))).toEqual(synced('new', 'f1', { etag: '2' }));
    j.putSynced(R2, synced('old', 'f1'));
    expect(j.syncedByRemoteId(R2, rid('f1'))?.path).toBe('old');
  });

  it('finds the rows of many Box ids in one call, pages of ids past 500 included, the same rows as one lookup an id', () => {
    j.transaction(() => {
      for (let i = 0; i < 1200; i += 3) j.putSynced(R, synced(`f${i}`, `id${i}`, { sizeBytes: i }));
      j.putSynced(R2, synced('other', 'id1'));
    });
    const ids = Array.from({ length: 1200 }, (_, i) => rid(`id${i}`));
    const found = j.syncedByRemoteIds!(R, [...ids, rid('nowhere')]);
    expect([...found.keys()].sort()).toEqual(ids.filter((_, i) => i % 3 === 0).sort());
    for (const id of [rid('id0'), rid('id600'), rid('id1197')]) expect(found.get(id)).toEqual(j.syncedByRemoteId(R, id));
    // Rows of another root are not this root's; an id given twice is found once; none asked, none found.
    expect(found.has(rid('id1'))).toBe(false);
    expect([...j.syncedByRemoteIds!(R2, [rid('id1'), rid('id1'), rid('id0')]).values()].map((s) => s.path)).toEqual(['other']);
    expect(j.syncedByRemoteIds!(R, []).size).toBe(0);
  });

  it('moves and deletes subtrees, and counts files, folders and bytes', () => {
    j.putSynced(R, synced('d', 'd1', { kind: 'folder', sizeBytes: 999 }));
    j.putSynced(R, synced('d/x', 'x1', { sizeBytes: 7 }));
    j.putSynced(R, synced('d/y', 'y1', { sizeBytes: 8 }));
    j.putSynced(R, synced('d.txt', 't1', { sizeBytes: 1 }));
    expect(j.countSynced(R)).toEqual({ files: 3, folders: 1, bytes: 16 });
    j.moveSyncedSubtree(R, p('d'), p('e'));
    expect(paths(j.syncedUnder(R, ''))).toEqual(['d.txt', 'e', 'e/x', 'e/y']);
    expect(j.syncedByRemoteId(R, rid('x1'))?.path).toBe('e/x');
    expect(paths(j.syncedUnder(R, p('e')))).toEqual(['e/x', 'e/y']);
    j.deleteSyncedSubtree(R, p('e'));
    expect(paths(j.syncedUnder(R, ''))).toEqual(['d.txt']);
    j.deleteSynced(R, p('d.txt'));
    expect(j.countSynced(R)).toEqual({ files: 0, folders: 0, bytes: 0 });
  });
});

describe('remote tree', () => {
  it('stores items by id, lists children by name, and deletes a subtree below a folder', () => {
    j.putRemote(remoteItem('10', '0', 'top', { kind: 'folder' }));
    j.putRemote(remoteItem('11', '10', 'b', { kind: 'folder' }));
    j.putRemote(remoteItem('12', '10', 'a', { sha1: 'cd'.repeat(20), sizeBytes: 3, versionId: 'v9' }));
    j.putRemote(remoteItem('13', '11', 'deep'));
    j.putRemote(remoteItem('20', '0', 'sibling'));
    expect(j.remoteChildren(rid('10')).map((e) => e.name)).toEqual(['a', 'b']);
    expect(j.getRemote(rid('12'))).toEqual(remoteItem('12', '10', 'a', { sha1: 'cd'.repeat(20), sizeBytes: 3, versionId: 'v9' }));
    j.deleteRemoteSubtree(rid('10'));
    expect(j.getRemote(rid('10'))).toBeDefined();
    expect([j.getRemote(rid('11')), j.getRemote(rid('12')), j.getRemote(rid('13'))]).toEqual([undefined, undefined, undefined]);
    expect(j.getRemote(rid('20'))).toBeDefined();
    j.deleteRemote(rid('10'));
    expect(j.getRemote(rid('10'))).toBeUndefined();
  });

  it('terminates on a parent cycle in bad data', () => {
    j.putRemote(remoteItem('a', 'b', 'a', { kind: 'folder' }));
    j.putRemote(remoteItem('b', 'a', 'b', { kind: 'folder' }));
    j.deleteRemoteSubtree(rid('a'));
    expect(j.getRemote(rid('a'))).toBeUndefined();
  });
});

describe('cursor, meta, trash marks, failures', () => {
  it('stores a stream position beyond 2^53 exactly, and meta values', () => {
    j.setCursor('changes', '123456789012345678901234');
    j.setMeta('account', 'u1');
    expect(j.getCursor('changes')).toBe('123456789012345678901234');
    expect(j.getCursor('sync')).toBeUndefined();
    expect(j.getMeta('account')).toBe('u1');
  });

  it('marks and unmarks trashed ids', () => {
    j.markTrashed(rid('5'), true);
    j.markTrashed(rid('5'), true);
    expect(j.isTrashed(rid('5'))).toBe(true);
    j.markTrashed(rid('5'), false);
    expect(j.isTrashed(rid('5'))).toBe(false);
  });

  it('records, replaces, lists and clears failures per root', () => {
    const f = { root: R, path: p('x'), code: 'rate_limited', message: 'later', attempts: 1, nextRetryAtMs: 1000, disposition: 'retry' as const };
    j.recordFailure(f);
    j.recordFailure({ ...f, attempts: 2, nextRetryAtMs: 3000, firstFailedAtMs: 2000 });
    j.recordFailure({ ...f, root: R2, disposition: 'skip' });
    // The park class is derived from the code when not given; the probe is kept as written; the row keeps the time
    // its failures began (now, as it was not given) when the same item fails again.
    const first = j.getFailure(R, p('x'))?.firstFailedAtMs;
    expect(first).toBeGreaterThan(2000);
    expect(j.getFailure(R, p('x'))).toEqual({ ...f, attempts: 2, nextRetryAtMs: 3000, parkClass: 'condition', probe: null, remoteId: null, firstFailedAtMs: first });
    j.recordFailure({ ...f, path: p('bad'), code: 'name-invalid', disposition: 'skip', probe: 'scan:755:0:0:1:2|755:0:0:3:4' });
    expect(j.getFailure(R, p('bad'))).toMatchObject({ parkClass: 'item', probe: 'scan:755:0:0:1:2|755:0:0:3:4' });
    j.clearFailure(R, p('bad'));
    expect(j.failures()).toHaveLength(2);
    expect(j.failures(R2).map((x) => x.disposition)).toEqual(['skip']);
    j.clearFailure(R, p('x'));
    expect(j.getFailure(R, p('x'))).toBeUndefined();
  });

  it('rolls back a failed transaction whole and survives reopening', () => {
    expect(() =>
      j.transaction(() => {
        j.putLocal(R, localFile('kept-out'));
        j.setCursor('changes', '5');
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(j.getLocal(R, p('kept-out'))).toBeUndefined();
    expect(j.getCursor('changes')).toBeUndefined();
    j.transaction(() => {
      j.putLocal(R, localFile('kept'));
      j.setCursor('changes', '6');
    });
    j.close();
    j = openJournal(dbPath).journal;
    expect(j.getLocal(R, p('kept'))).toBeDefined();
    expect(j.getCursor('changes')).toBe('6');
  });
});

describe('upload sessions', () => {
  const rec = {
    key: 'root-a:big.bin',
    sessionId: 'S1',
    endpoints: { upload_part: 'http://x/u', commit: 'http://x/c' },
    partSizeBytes: 8_388_608,
    totalParts: 3,
    fileSizeBytes: 20_000_000,
    sourceSha1: 'ef'.repeat(20),
    sourceMtimeMs: 1_700_000_000_000.5,
    expiresAtMs: 1_700_600_000_000,
    fileId: null,
    parts: [],
  };

  it('puts, adds parts in any order, lists, and deletes with the parts', () => {
    const s = j.uploadSessions;
    s.put(rec);
    s.addPart(rec.key, { partId: 'P2', offset: 8_388_608, size: 8_388_608, sha1: 'b' });
    s.addPart(rec.key, { partId: 'P1', offset: 0, size: 8_388_608, sha1: 'a' });
    expect(s.get(rec.key)?.parts.map((x) => x.partId)).toEqual(['P1', 'P2']);
    expect(s.get(rec.key)).toMatchObject({ sessionId: 'S1', endpoints: rec.endpoints, sourceMtimeMs: rec.sourceMtimeMs });
    expect(s.list()).toHaveLength(1);
    s.put({ ...rec, sessionId: 'S2' });
    expect(s.get(rec.key)?.parts).toEqual([]);
    s.addPart(rec.key, { partId: 'P1', offset: 0, size: 1, sha1: 'a' });
    s.delete(rec.key);
    expect(s.get(rec.key)).toBeUndefined();
    expect(s.list()).toEqual([]);
    const raw = new BetterSqlite3(dbPath, { readonly: true });
    expect(raw.prepare('SELECT count(*) AS n FROM upload_session_parts').get()).toEqual({ n: 0 });
    raw.close();
  });

  it('refuses a part for an unknown session', () => {
    expect(() => j.uploadSessions.addPart('nope', { partId: 'P', offset: 0, size: 1, sha1: 'a' })).toThrow(/no upload session/);
  });
});

describe('query plans', () => {
  it('runs every subtree statement as an indexed search, never a scan', () => {
    const raw = new BetterSqlite3(dbPath, { readonly: true });
    const params = { root: 'r', path: 'a', lower: 'a/', upper: 'a0', to: 'b' };
    const plans: string[] = [];
    for (const sql of [...Object.values(LOCAL_TREE_SQL), ...Object.values(SYNCED_TREE_SQL)]) {
      const st = raw.prepare(`EXPLAIN QUERY PLAN ${sql}`);
      const bound = sql.includes('@') ? [Object.fromEntries(Object.entries(params).filter(([k]) => sql.includes(`@${k}`)))] : ['r', 'a/', 'a0', 10];
      for (const row of st.all(...bound) as { detail: string }[]) plans.push(row.detail);
    }
    raw.close();
    expect(plans.length).toBeGreaterThanOrEqual(8);
    for (const d of plans) expect(d).toMatch(/^SEARCH \w+ USING PRIMARY KEY \(root=\? AND path[=>]/);
  });
});

describe('lookups by inode', () => {
  it('search the inode index (not every row of the root) and answer the lowest path with that inode', () => {
    j.transaction(() => {
      for (let i = 0; i < 300; i++) {
        j.putLocal(R, { ...localFile(`n/${i}`), inode: 10_000 + i });
        j.putSynced(R, { ...synced(`n/${i}`, `id${i}`), inode: 10_000 + i });
      }
      j.putLocal(R, { ...localFile('a/twin'), inode: 10_007 });
    });
    expect(j.localByInode(R, 10_007)?.path).toBe('a/twin');
    expect(j.syncedByInode(R, 10_299)?.path).toBe('n/299');
    expect(j.syncedByInode(R, 99)).toBeUndefined();
    const raw = new BetterSqlite3(dbPath, { readonly: true });
    for (const table of ['local_entries', 'synced_entries'] as const) {
      const plan = (raw.prepare(`EXPLAIN QUERY PLAN ${byInodeSql(table, '*')}`).all('r', 1) as { detail: string }[]).map((r) => r.detail);
      expect(plan).toEqual([`SEARCH ${table} USING INDEX ${table}_inode (root=? AND inode=?)`]);
    }
    raw.close();
  });
});

describe('maintenance', () => {
  it('checkpoints and truncates the WAL, keeping every row', () => {
    j.transaction(() => {
      for (let i = 0; i < 500; i++) j.putLocal(R, localFile(`m/${i}`));
    });
    expect(statSync(`${dbPath}-wal`).size).toBeGreaterThan(0);
    j.maintain?.();
    expect(statSync(`${dbPath}-wal`).size).toBe(0);
    expect([...j.localUnder(R, p('m'))]).toHaveLength(500);
  });
});

describe('unsynced paths and forgetting a root (a change of scope is never a delete)', () => {
  it('keeps why a path is not synced, per root, and forgets a whole root with its merge base', () => {
    j.transaction(() => {
      j.putSynced(R, synced('a', '1', { kind: 'folder' }));
      j.putSynced(R, synced('a/x.txt', '2'));
      j.putLocal(R, localFile('a/x.txt'));
      j.putSynced(R2, synced('b.txt', '3'));
      j.putUnsynced({ root: R, path: p('Archive'), reason: 'config-exclude', kind: 'folder', sinceMs: 5 });
      j.putUnsynced({ root: R2, path: p('old'), reason: 'ignore-file', kind: 'file', sinceMs: 6 });
      j.recordFailure({ root: R, path: p('a/x.txt'), code: 'c', message: 'm', attempts: 1, nextRetryAtMs: 0, disposition: 'retry' });
    });
    expect(j.syncedRoots()).toEqual([R, R2]);
    expect(j.unsyncedPaths(R)).toEqual([{ root: R, path: 'Archive', reason: 'config-exclude', kind: 'folder', sinceMs: 5 }]);
    j.putUnsynced({ root: R, path: p('Archive'), reason: 'ignore-file', kind: 'folder', sinceMs: 7 });
    expect(j.unsyncedPaths().map((u) => [u.root, u.path, u.reason])).toEqual([
      [R, 'Archive', 'ignore-file'],
      [R2, 'old', 'ignore-file'],
    ]);

    j.transaction(() => j.forgetRoot(R));
    expect(j.syncedRoots()).toEqual([R2]);
    expect(paths(j.syncedUnder(R, ''))).toEqual([]);
    expect(paths(j.localUnder(R, ''))).toEqual([]);
    expect(j.failures(R)).toEqual([]);
    expect(j.unsyncedPaths(R)).toEqual([]);
    // The other root is untouched.
    expect(paths(j.syncedUnder(R2, ''))).toEqual(['b.txt']);
    j.deleteUnsynced(R2, p('old'));
    expect(j.unsyncedPaths()).toEqual([]);
  });
});
