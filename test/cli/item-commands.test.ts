/**
 * Box Drive from the shell, end to end: `info`, `share`/`unshare`, `lock`/`unlock`, `versions`/`restore-version`
 * and `history` run as the real CLI (child processes) against box-server on port 0, with a real mirror and a
 * real journal, once with no daemon (the CLI takes the state lock and works directly) and once through a
 * running daemon's control socket. Including the error paths and their exit codes: outside every root (4), not
 * synced (5), locked by another user (6), credentials refused (7), a daemon that holds the state dir but does
 * not answer (8).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendControl } from '../../src/daemon/control/control-client.js';
import { readStateLock } from '../../src/daemon/lock.js';
import type { DaemonStatus } from '../../src/daemon/control/control-protocol.js';
import type { HistoryResult, ItemInfoResult, ShareResult, VersionsResult } from '../../src/daemon/control/item-protocol.js';
import { createHarness, type Harness } from '../daemon/daemon-harness.js';
import { runCli, type CliResult } from '../support/cli.js';
import { waitFor } from '../support/wait.js';

const explain = (r: CliResult): string => `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr.slice(-3000)}`;

for (const mode of ['direct', 'daemon'] as const) {
  describe(`item commands (${mode === 'direct' ? 'no daemon: direct, under the state lock' : 'through the running daemon'})`, { timeout: 180_000 }, () => {
    let h: Harness;
    let fileId: string;
    const cli = (args: readonly string[], cwd?: string): Promise<CliResult> =>
      runCli([...args, '--config', h.configFile], { env: { BOXSYNC_LOG_LEVEL: 'warn' }, timeoutMs: 60_000, ...(cwd ? { cwd } : {}) });
    const ok = async (args: readonly string[], cwd?: string): Promise<CliResult> => {
      const r = await cli(args, cwd);
      expect(r.code, explain(r)).toBe(0);
      return r;
    };
    const json = async <T,>(args: readonly string[]): Promise<T> => JSON.parse((await ok([...args, '--json'])).stdout) as T;

    /** Bring both sides together: a `sync --once`, or a daemon pass that started after this call. */
    const sync = async (): Promise<void> => {
      if (mode === 'direct') {
        await ok(['sync', '--once']);
        return;
      }
      const before = (await h.status()).passes;
      await sendControl(h.socketPath, { verb: 'sync-now' });
      await waitFor(
        async () => {
          const s = await sendControl<DaemonStatus>(h.socketPath, { verb: 'status' });
          return s.passes > before && s.engine.phase === 'idle';
        },
        { timeoutMs: 30_000, what: 'a daemon pass after sync-now' },
      );
    };

    beforeAll(async () => {
      h = await createHarness();
      fileId = h.web.uploadFile(h.rootId, 'report.txt', 'v1').id;
      h.web.uploadFile(h.rootId, 'other.txt', 'someone else works on this');
      h.web.createFolder(h.rootId, 'Folder');
      if (mode === 'daemon') await h.start();
      else await ok(['sync', '--once']);
      expect(await readFile(join(h.mirror, 'report.txt'), 'utf8')).toBe('v1');
    }, 90_000);
    afterAll(async () => {
      await h?.close();
    });

    it('info: Box id, etag, version, size, SHA-1, sync state, lock, link, web URL and the last operation, from a relative path', async () => {
      const r = await ok(['info', 'report.txt'], h.mirror);
      expect(r.stdout).toContain(`Box file:    ${fileId}`);
      expect(r.stdout).toContain('SHA-1:         ' + (await json<ItemInfoResult>(['info', join(h.mirror, 'report.txt')])).sha1);
      expect(r.stdout).toMatch(/sync state:    in-sync/);
      expect(r.stdout).toContain('shared link:   none');
      expect(r.stdout).toContain(`web:           ${new URL(h.srv.baseUrl).origin}/file/${fileId}`);
      expect(r.stdout).toMatch(/last operation: download at \S+: /);

      const info = await json<ItemInfoResult>(['info', join(h.mirror, 'report.txt')]);
      expect(info).toMatchObject({ boxId: fileId, kind: 'file', sizeBytes: 2, state: 'in-sync', lock: null, sharedLink: null });
      expect(info.sha1).toMatch(/^[0-9a-f]{40}$/);
      expect(info.versionId).toBeTruthy();
      expect(info.lastOperation).toMatchObject({ kind: 'download', ok: true });
      expect(info.lastOperation!.reason.length).toBeGreaterThan(0);

      const folder = await json<ItemInfoResult>(['info', join(h.mirror, 'Folder')]);
      expect(folder).toMatchObject({ kind: 'folder', webUrl: `${new URL(h.srv.baseUrl).origin}/folder/${folder.boxId}` });
    });

    it('a path outside every root exits 4, a path not synced exits 5, each with a clear message', async () => {
      const outside = await cli(['info', h.dir]);
      expect(outside.code, explain(outside)).toBe(4);
      expect(outside.stderr).toContain('is not inside a synced folder');
      const missing = await cli(['lock', join(h.mirror, 'not-there.txt')]);
      expect(missing.code, explain(missing)).toBe(5);
      expect(missing.stderr).toContain('is not synced (yet)');
    });

    it('share prints the link (or the direct URL), honours --access/--expires/--no-download, refuses a password it cannot set; unshare removes it', async () => {
      const path = join(h.mirror, 'report.txt');
      const url = (await ok(['share', path])).stdout.trim();
      expect(url).toMatch(/^https:\/\/app\.box\.com\/s\/\w+$/);
      const direct = (await ok(['share', path, '--direct'])).stdout.trim();
      expect(direct).toMatch(/^https?:\/\/\S+\/shared\/static\/\w+/);

      const shared = await json<ShareResult>(['share', path, '--access', 'company', '--expires', '2031-01-01', '--no-download']);
      expect(shared.link).toMatchObject({ access: 'company', expiresAtMs: new Date(2031, 0, 1).getTime() });
      const info = await json<ItemInfoResult>(['info', path]);
      expect(info.sharedLink).toMatchObject({ url, access: 'company' });

      const refused = await cli(['share', path, '--access', 'company', '--password', 'long enough secret']);
      expect(refused.code, explain(refused)).toBe(1);
      expect(refused.stderr).toContain('a password can only protect a link with --access open');
      expect(refused.stderr + refused.stdout).not.toContain('long enough secret');
      const folderRefused = await cli(['share', join(h.mirror, 'Folder'), '--direct']);
      expect(folderRefused.code, explain(folderRefused)).toBe(1);
      expect(folderRefused.stderr).toContain('no direct-download URL');

      await ok(['unshare', path]);
      expect((await json<ItemInfoResult>(['info', path])).sharedLink).toBeNull();
    });

    it("lock and unlock; another user's lock exits 6 and shows in info", async () => {
      const path = join(h.mirror, 'report.txt');
      expect((await ok(['lock', path, '--expires', '2031-01-01'])).stdout).toContain('locked until');
      const locked = await json<ItemInfoResult>(['info', path]);
      expect(locked.lock).toMatchObject({ ours: true, expiresAtMs: new Date(2031, 0, 1).getTime() });
      expect((await ok(['info', path])).stdout).toContain('lock:          locked by you');
      if (mode === 'daemon') expect((await ok(['status', path])).stdout).toContain('  lock: locked by you, until ');
      await ok(['unlock', path]);
      expect((await json<ItemInfoResult>(['info', path])).lock).toBeNull();

      const other = h.srv.control.addUser({ name: 'Other', login: 'other@example.com' });
      const otherId = h.web.findByPath('Mirror/other.txt')!.id;
      h.srv.control.as(other.userId).lock(otherId, { preventDownload: true });
      const otherPath = join(h.mirror, 'other.txt');
      expect((await ok(['info', otherPath])).stdout).toContain(`locked by another user (id ${other.userId}), download prevented`);
      for (const args of [['lock', otherPath], ['unlock', otherPath]]) {
        const r = await cli(args);
        expect(r.code, explain(r)).toBe(6);
        expect(r.stderr).toContain('is locked by another Box user');
      }
      h.srv.control.as(other.userId).unlock(otherId);
    });

    it('versions lists them; restore-version promotes one and sync brings the old content down', async () => {
      const path = join(h.mirror, 'report.txt');
      h.web.uploadVersion(fileId, 'v2 from the web');
      await sync();
      expect(await readFile(path, 'utf8')).toBe('v2 from the web');

      const v = await json<VersionsResult>(['versions', path]);
      expect(v.versions).toHaveLength(2);
      expect(v.versions[0]).toMatchObject({ current: true, sizeBytes: 'v2 from the web'.length });
      const old = v.versions[1]!;
      expect(old).toMatchObject({ current: false, sizeBytes: 2, by: 'user@example.com' });
      const readable = (await ok(['versions', relative(h.mirror, path)], h.mirror)).stdout;
      expect(readable).toContain(old.id);
      expect(readable).toContain('(current)');

      const restored = (await ok(['restore-version', path, old.id])).stdout;
      expect(restored).toContain(`version ${old.id} is the current one on Box again`);
      // Through the daemon the command asks for a pass itself; directly, the next sync does it.
      expect(restored).toContain(mode === 'daemon' ? 'the daemon brings it down now' : 'the next sync');
      if (mode === 'direct') await sync();
      await waitFor(async () => (await readFile(path, 'utf8')) === 'v1', { timeoutMs: 30_000, what: 'the old version to come down' });
      const bad = await cli(['restore-version', path, '999999999']);
      expect(bad.code, explain(bad)).toBe(1);
      expect(bad.stderr).toContain('has no earlier version 999999999');
    });

    it('history shows the operations and their reasons, for everything or one path, and --since', async () => {
      await writeFile(join(h.mirror, 'made-here.txt'), 'local');
      await sync();
      await waitFor(async () => (await json<HistoryResult>(['history'])).entries.some((e) => e.kind === 'upload'), { timeoutMs: 30_000, what: 'the upload in the history' });
      const all = (await ok(['history'])).stdout;
      expect(all).toMatch(/download +\S*report\.txt {2}\(.+\)/);
      expect(all).toMatch(/upload +\S*made-here\.txt {2}\(.+\)/);
      const one = await json<HistoryResult>(['history', join(h.mirror, 'report.txt'), '--since', '1h']);
      expect(one.entries.length).toBeGreaterThanOrEqual(2);
      expect(new Set(one.entries.map((e) => e.path))).toEqual(new Set(['report.txt']));
      const bad = await cli(['history', '--since', 'yesterday']);
      expect(bad.code, explain(bad)).toBe(2);
    });

    if (mode === 'direct') {
      it('a daemon that holds the state dir but does not answer exits 8', async () => {
        const { acquireStateLock } = await import('../../src/daemon/lock.js');
        const lock = acquireStateLock(join(h.dir, 'state'), 'daemon');
        try {
          const r = await cli(['info', join(h.mirror, 'report.txt')]);
          expect(r.code, explain(r)).toBe(8);
          expect(r.stderr).toContain(`daemon (pid ${process.pid}) holds`);
        } finally {
          lock.release();
        }
      });
    }

    it('credentials Box refuses exit 7 and never show the token', async () => {
      h.srv.control.revokeAll();
      if (mode === 'daemon') {
        // A revoked login ends the daemon (exit 1, the reason kept for status); the command then works directly.
        await sendControl(h.socketPath, { verb: 'sync-now' }).catch(() => undefined);
        await waitFor(() => readStateLock(join(h.dir, 'state')) === null, { timeoutMs: 60_000, what: 'the daemon to stop on the revoked login and release the state dir' });
      }
      const r = await cli(['info', join(h.mirror, 'report.txt')]);
      expect(r.code, explain(r)).toBe(7);
      expect(r.stderr).toContain('boxsync login');
      expect(r.stderr + r.stdout).not.toMatch(/bearer|access_token/i);
    });
  });
}
