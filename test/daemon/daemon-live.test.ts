/**
 * The real daemon process, live: remote changes show up locally, local changes show up on Box, and the
 * control socket answers. One daemon for the whole file; each test waits on conditions with a bound.
 */
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendControl } from '../../src/daemon/control/control-client.js';
import type { PathStatus } from '../../src/daemon/control/control-protocol.js';
import { runCli } from '../support/cli.js';
import { waitFor } from '../support/wait.js';
import { createHarness, type DaemonRun, type Harness } from './daemon-harness.js';

const exists = (p: string): Promise<boolean> => stat(p).then(() => true, () => false);
const BOUND = { timeoutMs: 15_000, intervalMs: 50 };

describe('boxsync daemon (live, real process)', () => {
  let h: Harness;
  let run: DaemonRun;

  beforeAll(async () => {
    h = await createHarness();
    const docs = h.web.createFolder(h.rootId, 'Docs');
    h.web.uploadFile(docs.id, 'before.txt', 'was there before the daemon');
    run = await h.start();
  });

  afterAll(async () => {
    if (run) {
      const r = await h.stop(run);
      expect(r.code).toBe(0);
    }
    await h?.close();
  });

  it('mirrors what was on Box at start, and serves status on a 0600 socket', async () => {
    expect(await readFile(join(h.mirror, 'Docs/before.txt'), 'utf8')).toBe('was there before the daemon');
    expect((await stat(h.socketPath)).mode & 0o777).toBe(0o600);
    // After its first pass the daemon may run another (hints or Box events that came during the first): idle once
    // that one ends too.
    const s = await waitFor(async () => {
      const now = await h.status();
      return now.engine.phase === 'idle' && now.remoteStream.state === 'listening' ? now : null;
    }, { timeoutMs: 30_000, what: 'the daemon idle and listening after its first passes' });
    expect(s.pid).toBe(run.child.pid);
    expect(s.engine.phase).toBe('idle');
    expect(s.watchers[0]!.health.state).toBe('ok');
    expect(s.remoteStream.configured).toBe('sync');
    expect(s.remoteStream.effective).toBe('sync');
    expect(s.remoteStream.state).toBe('listening');
  });

  it('remote create, edit, rename, move and trash each show up locally', async () => {
    const docs = h.web.findByPath('Mirror/Docs')!;
    const f = h.web.uploadFile(h.rootId, 'remote.txt', 'v1');
    await waitFor(async () => (await readFile(join(h.mirror, 'remote.txt'), 'utf8').catch(() => '')) === 'v1', { ...BOUND, what: 'remote create' });
    h.web.uploadVersion(f.id, 'v2 from the web');
    await waitFor(async () => (await readFile(join(h.mirror, 'remote.txt'), 'utf8').catch(() => '')) === 'v2 from the web', { ...BOUND, what: 'remote edit' });
    h.web.rename('file', f.id, 'renamed.txt');
    await waitFor(async () => (await exists(join(h.mirror, 'renamed.txt'))) && !(await exists(join(h.mirror, 'remote.txt'))), { ...BOUND, what: 'remote rename' });
    h.web.move('file', f.id, docs.id);
    await waitFor(async () => (await exists(join(h.mirror, 'Docs/renamed.txt'))) && !(await exists(join(h.mirror, 'renamed.txt'))), { ...BOUND, what: 'remote move' });
    h.web.trash('file', f.id);
    await waitFor(async () => !(await exists(join(h.mirror, 'Docs/renamed.txt'))), { ...BOUND, what: 'remote trash' });
  });

  it('local create, edit, rename, move and delete each show up on Box', async () => {
    const onBox = (path: string): { id: string } | null => h.web.findByPath(`Mirror/${path}`);
    await writeFile(join(h.mirror, 'local.txt'), 'l1');
    const id = (await waitFor(() => onBox('local.txt'), { ...BOUND, what: 'local create' })).id;
    expect(h.web.readFile(id).toString()).toBe('l1');
    await writeFile(join(h.mirror, 'local.txt'), 'l2, edited locally');
    await waitFor(() => h.web.readFile(id).toString() === 'l2, edited locally', { ...BOUND, what: 'local edit' });
    await rename(join(h.mirror, 'local.txt'), join(h.mirror, 'local-renamed.txt'));
    await waitFor(() => onBox('local-renamed.txt')?.id === id && !onBox('local.txt'), { ...BOUND, what: 'local rename (same Box id)' });
    await mkdir(join(h.mirror, 'Sub'));
    await rename(join(h.mirror, 'local-renamed.txt'), join(h.mirror, 'Sub/local-renamed.txt'));
    await waitFor(() => onBox('Sub/local-renamed.txt')?.id === id, { ...BOUND, what: 'local move (same Box id)' });
    await rm(join(h.mirror, 'Sub/local-renamed.txt'));
    await waitFor(() => !onBox('Sub/local-renamed.txt'), { ...BOUND, what: 'local delete' });
    expect(h.web.getItem('file', id)?.['item_status']).toBe('trashed');
  });

  it('answers status PATH with the state and the reason for the last operation', async () => {
    await writeFile(join(h.mirror, 'explain.txt'), 'why?');
    await waitFor(() => h.web.findByPath('Mirror/explain.txt'), { ...BOUND, what: 'upload of explain.txt' });
    const p = await waitFor(async () => {
      const r = await sendControl<PathStatus>(h.socketPath, { verb: 'status-path', path: join(h.mirror, 'explain.txt') });
      return r.state === 'in-sync' && r.lastOperation ? r : null;
    }, BOUND);
    expect(p.lastOperation!.kind).toBe('upload');
    expect(p.lastOperation!.reason.length).toBeGreaterThan(5);
    const cli = await runCli(['status', join(h.mirror, 'explain.txt'), '--config', h.configFile]);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toMatch(/in-sync/);
    expect(cli.stdout).toMatch(/because: /);
    const outside = await sendControl<PathStatus>(h.socketPath, { verb: 'status-path', path: '/etc/passwd' });
    expect(outside.state).toBe('outside');
  });

  it('pause holds transfers, resume releases them, sync-now runs a full pass, and a wrong guard id is refused', async () => {
    await sendControl(h.socketPath, { verb: 'pause' });
    expect((await h.status()).engine.phase).toBe('paused');
    const text = await runCli(['status', '--config', h.configFile]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/paused/);
    await writeFile(join(h.mirror, 'while-paused.txt'), 'waits');
    await waitFor(async () => (await h.status()).engine.roots[0]!.queued.ops > 0, { ...BOUND, what: 'the upload to be queued while paused' });
    expect(h.web.findByPath('Mirror/while-paused.txt')).toBeNull();
    const r = await runCli(['resume', '--config', h.configFile]);
    expect(r.code).toBe(0);
    await waitFor(() => h.web.findByPath('Mirror/while-paused.txt'), { ...BOUND, what: 'upload after resume' });
    const before = (await h.status()).passes;
    const now = await runCli(['sync-now', '--config', h.configFile]);
    expect(now.code).toBe(0);
    await waitFor(async () => (await h.status()).passes > before, BOUND);
    const bad = await runCli(['confirm', 'no-such-guard', '--config', h.configFile]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/"no-such-guard" is not a safety guard id .*nothing was changed/);
    const notHeld = await runCli(['confirm', 'mass-delete:0123abcd:500', '--config', h.configFile]);
    expect(notHeld.code).toBe(2);
    expect(notHeld.stderr).toMatch(/no safety guard with id mass-delete:0123abcd:500 is held; nothing was changed/);
  });

  it('logs pino JSON lines on stdout when not on a TTY, without the token', async () => {
    const lines = run.output().split('\n').filter((l) => l.startsWith('{'));
    expect(lines.length).toBeGreaterThan(3);
    const parsed = lines.map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(parsed.some((l) => /boxsync daemon started/.test(l.msg))).toBe(true);
    expect(run.output()).not.toMatch(/Bearer T\b|"T"/);
  });
});
