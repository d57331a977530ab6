/**
 * The bench's synthetic "already mirrored" setup (journal-fixture.ts) must hold exactly what a real first mirror
 * writes, or its no-change pass measures something else: built next to a real `sync --once` mirror of the same
 * Box folder, both journals must agree row for row (what differs by nature: the root id, which hashes the local
 * path, inodes, and a folder's mtime), both must describe their disk, and a `sync --once` on the fixture must do
 * nothing and leave its trees untouched.
 */
import { lstatSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { startBoxServer, type BoxServer } from '../../src/box-server/index.js';
import { writeBoxConfig } from '../support/box-config.js';
import { runCli } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';
import { buildSyncedFixture } from './journal-fixture.js';

type Row = Record<string, unknown>;
type Dump = Record<'meta' | 'remote' | 'local' | 'synced' | 'cursors' | 'trashed' | 'failures' | 'sessions' | 'operations', Row[]>;

function dump(journalFile: string): Dump {
  const db = new BetterSqlite3(journalFile, { readonly: true });
  try {
    const all = (sql: string): Row[] => db.prepare(sql).all() as Row[];
    return {
      // Per-root keys (the clean mark) end in the root id, which differs between the two folders.
      meta: all('SELECT key FROM meta ORDER BY key').map((r) => ({ key: String(r.key).replace(/:[0-9a-f]{16}$/, ':<root>') })),
      remote: all('SELECT * FROM remote_items ORDER BY id'),
      local: all('SELECT * FROM local_entries ORDER BY path'),
      synced: all('SELECT * FROM synced_entries ORDER BY path'),
      cursors: all('SELECT * FROM stream_cursors ORDER BY name'),
      trashed: all('SELECT * FROM trashed_remote_ids'),
      failures: all('SELECT * FROM failures'),
      sessions: all('SELECT * FROM upload_sessions'),
      operations: all('SELECT path, kind, reason, ok, error FROM operations ORDER BY path, kind'),
    };
  } finally {
    db.close();
  }
}

/** What must agree between two mirrors of the same folder: everything but the root id, inodes and folder mtimes. */
const comparable = (rows: Row[]): Row[] =>
  rows.map(({ root: _root, inode: _inode, mtime_ms, ...rest }) => ({ ...rest, ...(rest['kind'] === 'folder' ? {} : { mtime_ms }) }));

/**
 * Rows that do not describe the disk: a file's inode, size and mtime are exact; a folder's row may be older than
 * its mtime (a first mirror records a folder when it creates it, before downloading into it).
 */
function unlikeDisk(mirror: string, local: Row[]): string[] {
  const wrong: string[] = [];
  for (const r of local) {
    const st = lstatSync(join(mirror, String(r['path'])));
    const ok = st.isDirectory()
      ? st.ino === r['inode'] && r['size_bytes'] === 0 && Number(r['mtime_ms']) <= st.mtimeMs
      : st.ino === r['inode'] && st.mtimeMs === r['mtime_ms'] && st.size === r['size_bytes'];
    if (!ok) wrong.push(String(r['path']));
  }
  return wrong;
}

let srv: BoxServer | undefined;
let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await srv?.close();
  await cleanup?.();
  srv = undefined;
  cleanup = undefined;
});

describe('bench journal fixture', () => {
  it('holds the rows a real first mirror writes, and its sync --once plans nothing', async () => {
    const tmp = await makeTempDir('boxsync-fixture-');
    cleanup = tmp.cleanup;
    srv = await startBoxServer({ port: 0, tokens: ['T'] });
    const fx = await buildSyncedFixture({ srv, token: 'T', dir: join(tmp.dir, 'fixture'), files: 120 });
    const built = dump(fx.journalFile);

    // The fixture first (before the real mirror's downloads add events to the stream): nothing to do.
    const again = await runCli(['sync', '--once', '--config', fx.configFile], { env: { BOXSYNC_LOG_LEVEL: 'warn' } });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/converged in .*\(1 pass\): 0 downloaded \(0 B\), 0 uploaded \(0 B\), 0 conflicts, 0 failed/);
    const after = dump(fx.journalFile);
    for (const t of ['remote', 'synced', 'cursors', 'operations'] as const) expect([t, after[t]]).toEqual([t, built[t]]);
    const files = (rows: Row[]): Row[] => rows.filter((r) => r['kind'] === 'file');
    expect(files(after.local)).toEqual(files(built.local));
    expect(comparable(after.local)).toEqual(comparable(built.local));

    // A real first mirror of the same Box folder.
    const realMirror = join(tmp.dir, 'real', 'mirror');
    const realState = join(tmp.dir, 'real', 'state');
    const realConfig = join(tmp.dir, 'real', 'config.json');
    mkdirSync(join(tmp.dir, 'real'));
    await writeBoxConfig(realConfig, {
      srv,
      token: 'T',
      remoteId: fx.boxFolderId,
      localPath: realMirror,
      stateDir: realState,
      socketPath: join(tmp.dir, 'real', 'c.sock'),
      extra: { rateLimit: undefined },
    });
    const first = await runCli(['sync', '--once', '--config', realConfig], { env: { BOXSYNC_LOG_LEVEL: 'warn' } });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('120 downloaded');

    const real = dump(join(realState, 'journal.db'));
    const synthetic = built;
    expect(synthetic.local).toHaveLength(120 + fx.folders);
    expect(synthetic.meta).toEqual(real.meta);
    expect(synthetic.remote).toEqual(real.remote);
    expect(synthetic.cursors).toEqual(real.cursors);
    expect(comparable(synthetic.local)).toEqual(comparable(real.local));
    expect(comparable(synthetic.synced)).toEqual(comparable(real.synced));
    expect(synthetic.operations).toEqual(real.operations);
    for (const t of ['trashed', 'failures', 'sessions'] as const) expect([t, synthetic[t]]).toEqual([t, real[t]]);
    expect(unlikeDisk(fx.mirror, synthetic.local)).toEqual([]);
    expect(unlikeDisk(realMirror, real.local)).toEqual([]);
    // The fixture's synced side of every row is its local row's inode and mtime (a real mirror's folder rows
    // may already have been refreshed by a later pass of the same run).
    const local = new Map(synthetic.local.map((r) => [r['path'], r]));
    expect(synthetic.synced.filter((s) => local.get(s['path'])?.['inode'] !== s['inode'] || local.get(s['path'])?.['mtime_ms'] !== s['mtime_ms'])).toEqual([]);
  });
});
