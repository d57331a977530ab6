/**
 * `sync --once` at the edges, before any syncing: config errors, the missing --once, where the config comes
 * from, and the state-dir lock (a live holder refuses with exit 2 naming its pid; a stale one is taken over).
 */
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquireStateLock, readStateLock } from '../../src/daemon/lock.js';
import { runCli } from '../support/cli.js';
import { explain, exists, startSyncEnv, summaryLine, TOKEN, type SyncEnv } from './sync-harness.js';

let env: SyncEnv;
beforeAll(async () => {
  env = await startSyncEnv();
});
afterAll(async () => {
  await env.close();
});

describe('config errors', () => {
  it('a relative localPath: exit 2, the message names the file and the key, nothing is touched', async () => {
    const file = join(env.dir, 'bad.json');
    await writeFile(file, JSON.stringify({ auth: { developerToken: TOKEN }, folders: [{ remoteId: '0', localPath: 'Box' }], stateDir: join(env.dir, 'bad-state') }));
    const r = await runCli(['sync', '--once', '--config', file]);
    expect(r.code, explain(r)).toBe(2);
    expect(r.stderr).toContain(`config error in ${file}: folders[0].localPath: expected an absolute path`);
    expect(r.stdout).toBe('');
    expect(r.stderr + r.stdout).not.toContain(TOKEN);
    expect(await exists(join(env.dir, 'bad-state'))).toBe(false);
  });

  it('a missing file: exit 2 and a hint', async () => {
    const file = join(env.dir, 'absent.json');
    const r = await runCli(['sync', '--once', '--config', file]);
    expect(r.code, explain(r)).toBe(2);
    expect(r.stderr).toContain(`config error in ${file}: file not found`);
  });

  it('reads BOXSYNC_CONFIG when --config is absent', async () => {
    const file = join(env.dir, 'env-bad.json');
    await writeFile(file, '{ not json');
    const r = await runCli(['sync', '--once'], { env: { BOXSYNC_CONFIG: file } });
    expect(r.code, explain(r)).toBe(2);
    expect(r.stderr).toContain(`config error in ${file}: not valid JSON`);
  });

  it('reads $XDG_CONFIG_HOME/boxsync/config.json last', async () => {
    const xdg = join(env.dir, 'xdg');
    const r = await runCli(['sync', '--once'], { env: { BOXSYNC_CONFIG: '', XDG_CONFIG_HOME: xdg } });
    expect(r.code, explain(r)).toBe(2);
    expect(r.stderr).toContain(`config error in ${join(xdg, 'boxsync', 'config.json')}: file not found`);
  });

  it('refuses `sync` without --once', async () => {
    const r = await runCli(['sync', '--config', env.configFile]);
    expect(r.code, explain(r)).toBe(2);
    expect(r.stderr).toContain('add --once');
  });
});

describe('the state-dir lock', () => {
  it('a live holder: exit 2 naming its pid and what to do (a daemon that does not answer: said, not "wait"), and the holder keeps its lock', async () => {
    const holder = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      await mkdir(env.stateDir, { recursive: true });
      for (const purpose of ['daemon', 'sync --once'] as const) {
        await writeFile(join(env.stateDir, 'lock'), JSON.stringify({ pid: holder.pid, purpose, startedAtMs: Date.now(), startTicks: null }));
        const r = await env.sync();
        expect(r.code, explain(r)).toBe(2);
        if (purpose === 'daemon') {
          // The run is handed to the daemon (test/daemon/daemon-sync-once.test.ts); this one does not answer.
          expect(r.stderr).toContain(`the daemon (pid ${holder.pid}) holds ${env.stateDir} but does not answer on its control socket`);
          expect(r.stderr).toContain('this run did not start and nothing was changed');
          expect(r.stderr).not.toContain('Wait for it to finish');
        } else {
          expect(r.stderr).toContain(`another boxsync process (pid ${holder.pid}, sync --once) is working on ${env.stateDir}`);
          expect(r.stderr).toContain('Wait for it to finish');
        }
        expect(readStateLock(env.stateDir)?.pid).toBe(holder.pid);
        expect(await exists(join(env.stateDir, 'journal.db'))).toBe(false);
      }
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('a stale lock of a dead process is taken over and released at the end', async () => {
    const dead = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    const deadPid = await new Promise<number>((resolve) => dead.on('exit', () => resolve(dead.pid!)));
    await writeFile(join(env.stateDir, 'lock'), JSON.stringify({ pid: deadPid, purpose: 'sync --once', startedAtMs: 0, startTicks: null }));
    const r = await env.sync();
    expect(r.code, explain(r)).toBe(0);
    expect(summaryLine(r)).toMatch(/^boxsync: converged/);
    expect(r.stderr).toContain('stale lock');
    expect(readStateLock(env.stateDir)).toBeNull();
  });

  it('a state dir that is not a writable folder: exit 2 with a message that says what to do', async () => {
    const stateFile = join(env.dir, 'state-is-a-file');
    await writeFile(stateFile, 'not a folder');
    await env.writeConfig({ extra: { stateDir: stateFile } });
    try {
      const r = await env.sync();
      expect(r.code, explain(r)).toBe(2);
      expect(r.stderr).toContain(`cannot use the state dir ${stateFile} (EEXIST)`);
      expect(r.stderr).toContain('set stateDir in the config to another folder');
    } finally {
      await env.writeConfig();
    }
  });

  it('in one process: a second acquire fails while the first holds, and succeeds after release', () => {
    const first = acquireStateLock(env.stateDir, 'sync --once');
    try {
      expect(() => acquireStateLock(env.stateDir, 'daemon')).toThrow(`pid ${process.pid}, sync --once`);
    } finally {
      first.release();
    }
    const second = acquireStateLock(env.stateDir, 'daemon');
    expect(readStateLock(env.stateDir)?.purpose).toBe('daemon');
    second.release();
    expect(readStateLock(env.stateDir)).toBeNull();
  });

  it('a lock whose pid was reused by another process is stale', () => {
    // Our own pid, but a start time that is not ours: the recorded holder is gone and the pid was recycled.
    const lockFile = join(env.stateDir, 'lock');
    return writeFile(lockFile, JSON.stringify({ pid: process.pid, purpose: 'daemon', startedAtMs: 0, startTicks: '1' })).then(() => {
      const lock = acquireStateLock(env.stateDir, 'sync --once');
      expect(lock.tookOverFromPid).toBe(process.pid);
      lock.release();
    });
  });
});
