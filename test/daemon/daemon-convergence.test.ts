/**
 * Issue 26 points 14 and 15, the three workloads that left a path behind or froze the daemon, with the daemon
 * running (real child process, box-server, real directories):
 * - a `git checkout` storm (plain fs ops, as git does them: files rewritten, renamed, deleted and added, the
 *   index written to index.lock and renamed over index), then three quick round trips;
 * - a package manager's churn: thousands of files created, deleted 2 s later, half created again;
 * - atomic saves: five documents saved 50 times each by writing a temp file and renaming it over the document.
 * Each must converge (Box equal to the disk), and `status` must tell the truth throughout: it answers, and it
 * never says idle and healthy while the disk and Box differ without a pass coming.
 */
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sendControl } from '../../src/daemon/control/control-client.js';
import type { DaemonStatus, PathStatus } from '../../src/daemon/control/control-protocol.js';
import { readBoxTree, readLocalTree } from '../sim/trees.js';
import { closedAfterEach } from '../support/closed-after-each.js';
import { askStatusAllAlong } from '../support/status-asker.js';
import { waitFor } from '../support/wait.js';
import { createHarness, type DaemonRun, type Harness } from './daemon-harness.js';

// Each test's harness (box-server, daemon child, temp dirs) is closed after it; `run` is the daemon it started.
const createClosed = closedAfterEach(createHarness);
let h: Harness | undefined;
let run: DaemonRun | undefined;

/** Paths where the mirror and Box differ (kind or content), at most 20. */
async function differences(x: Harness): Promise<string[]> {
  const local = (await readLocalTree(x.mirror)).entries;
  const box = readBoxTree(x.web, x.rootId).entries;
  const out: string[] = [];
  for (const [p, e] of local) {
    const b = box.get(p);
    if (!b) out.push(`${p}: not on Box`);
    else if (b.kind !== e.kind || (e.kind === 'file' && b.kind === 'file' && e.sha1 !== b.sha1)) out.push(`${p}: differs`);
  }
  for (const p of box.keys()) if (!local.has(p)) out.push(`${p}: only on Box`);
  return out.slice(0, 20);
}

const healthy = (s: DaemonStatus): boolean =>
  s.engine.phase === 'idle' && s.engine.errors.length === 0 && s.engine.roots.every((r) => r.queued.ops === 0 && r.inFlight.length === 0);

/** How long `status` may say idle and healthy while the trees differ, with no pass starting (watcher settle, gather, timers). */
const QUIET_LIE_MS = 45_000;

/**
 * Wait until Box equals the disk and the daemon is idle and healthy, checking `status` all along: every status
 * query is answered (within `answerMs`), and a status that says idle and healthy while the trees differ is
 * followed by a pass within QUIET_LIE_MS (a path pending with no pass scheduled is the lie this catches).
 */
async function convergeTruthfully(x: Harness, what: string, timeoutMs = 240_000, answerMs = 20_000): Promise<DaemonStatus> {
  let lie: { sinceMs: number; passes: number; diff: string[] } | null = null;
  let slowest = 0;
  const s = await waitFor(
    async () => {
      const t0 = Date.now();
      const st = await sendControl<DaemonStatus>(x.socketPath, { verb: 'status' }, answerMs);
      slowest = Math.max(slowest, Date.now() - t0);
      const diff = await differences(x);
      if (diff.length === 0 && healthy(st)) return st;
      if (!healthy(st) || diff.length === 0 || (lie !== null && st.passes !== lie.passes)) lie = null;
      else if (lie === null) lie = { sinceMs: Date.now(), passes: st.passes, diff };
      else if (Date.now() - lie.sinceMs > QUIET_LIE_MS) {
        throw new Error(`status said idle and healthy for ${QUIET_LIE_MS} ms with no pass while Box and the disk differ: ${lie.diff.join('; ')}`);
      }
      return null;
    },
    { timeoutMs, intervalMs: 500, what },
  ).catch(async (e: unknown) => {
    throw new Error(`${String(e)}\nstill different: ${(await differences(x)).join('; ')}\n--- daemon output (tail) ---\n${run?.output().split('\n').slice(-40).join('\n')}`);
  });
  expect(slowest).toBeLessThan(answerMs);
  // Stays so: a second look a moment later finds nothing new to do.
  expect(await differences(x)).toEqual([]);
  return s;
}

async function put(root: string, rel: string, content: string): Promise<void> {
  await mkdir(dirname(join(root, rel)), { recursive: true });
  await writeFile(join(root, rel), content);
}

/** The folders above a path. */
const ancestorsOf = (p: string): string[] => p.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/'));

describe('daemon: workloads converge and status tells the truth (issue 26 points 14-15)', () => {
  it('a git checkout storm (400 files: 60 changed, 40 renamed, 20 deleted, 20 added, three round trips) converges, .git/index included', async () => {
    h = await createClosed({ config: { transferConcurrency: 8 } });
    const m = h.mirror;
    // The work tree: 40 folders of 10 files; the repository's own files beside it.
    const main = new Map<string, string>();
    for (let i = 0; i < 400; i++) main.set(`src/d${String(i % 40).padStart(2, '0')}/f${i}.txt`, `main ${i}\n`);
    const branch = new Map<string, string>();
    const renames: [string, string][] = [];
    for (const [p, c] of main) {
      const i = Number(/f(\d+)\.txt$/.exec(p)![1]);
      if (i < 60) branch.set(p, `branch ${i}\n`);
      else if (i < 100) {
        const to = `src/d${String((i + 7) % 40).padStart(2, '0')}/moved-${i}.txt`;
        branch.set(to, c);
        renames.push([p, to]);
      } else if (i >= 120) branch.set(p, c);
    }
    for (let i = 0; i < 20; i++) branch.set(`src/${i % 2 === 0 ? 'added' : `d${String(i).padStart(2, '0')}`}/new-${i}.txt`, `added ${i}\n`);
    for (const [p, c] of main) await put(m, p, c);
    await put(m, '.git/HEAD', 'ref: refs/heads/main\n');
    await put(m, '.git/index', 'index of main 0\n');
    for (let i = 0; i < 20; i++) await put(m, `.git/objects/${String(i).padStart(2, '0')}/obj`, `object ${i}\n`);
    run = await h.start();
    await convergeTruthfully(h, 'the repository on Box');

    let n = 0;
    const checkout = async (from: Map<string, string>, to: Map<string, string>, name: string, moves: readonly [string, string][]): Promise<void> => {
      n += 1;
      // git writes the new index to index.lock, updates the work tree, renames the lock over the index.
      await writeFile(join(m, '.git/index.lock'), `index of ${name} ${n}\n`);
      for (const [a, b] of moves) {
        await mkdir(dirname(join(m, b)), { recursive: true });
        await rename(join(m, a), join(m, b));
      }
      const moved = new Set(moves.flatMap(([a, b]) => [a, b]));
      for (const p of from.keys()) if (!to.has(p) && !moved.has(p)) await rm(join(m, p));
      for (const [p, c] of to) if (!moved.has(p) && from.get(p) !== c) await put(m, p, c);
      await writeFile(join(m, '.git/HEAD'), `ref: refs/heads/${name}\n`);
      await rename(join(m, '.git/index.lock'), join(m, '.git/index'));
    };
    const mark = h.srv.control.requests().length;
    await checkout(main, branch, 'feature', renames);
    const back = renames.map(([a, b]) => [b, a] as [string, string]);
    for (let i = 0; i < 3; i++) {
      await checkout(branch, main, 'main', back);
      await checkout(main, branch, 'feature', renames);
    }
    await convergeTruthfully(h, 'the checkout storm on Box');
    // The storm relisted every folder 17 times on main (2,000 files): a folder is listed when new to the journal only.
    const perFolder = new Map<string, number>();
    for (const r of h.srv.control.requests().slice(mark)) {
      const id = /^\/2\.0\/folders\/([^/]+)\/items$/.exec(r.path)?.[1];
      if (r.method === 'GET' && id !== undefined) perFolder.set(id, (perFolder.get(id) ?? 0) + 1);
    }
    console.log(`checkout storm: ${[...perFolder.values()].reduce((a, b) => a + b, 0)} folder listings of ${perFolder.size} folders: ${JSON.stringify([...perFolder].map(([id, n]) => [h!.web.getItem('folder', id)?.['name'] ?? id, n]))}`);
    // Listings grow with the tree, not with the round trips: at most two per folder of the tree in all. (A per-folder
    // bound of 5 failed once with two busy loops beside a CI run: one folder listed 10 times, the rest none; the
    // regression this guards against listed every folder 17 times.)
    const folders = new Set([...main.keys(), ...branch.keys(), '.git/HEAD', ...Array.from({ length: 20 }, (_, i) => `.git/objects/${String(i).padStart(2, '0')}/obj`)].flatMap((p) => ancestorsOf(p)));
    expect([...perFolder.values()].reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(2 * folders.size);
    const index = h.web.findByPath('Mirror/.git/index');
    expect(index?.type).toBe('file');
    const st = await sendControl<PathStatus>(h.socketPath, { verb: 'status-path', path: join(m, '.git/index') });
    expect(st.state).toBe('in-sync');
  }, 420_000);

  it('a package manager\'s churn (5,000 created, deleted 2 s later, 2,500 created again) converges while status keeps answering', async () => {
    h = await createClosed({ config: { transferConcurrency: 8 } });
    const m = h.mirror;
    await put(m, 'package.json', '{}\n');
    run = await h.start();
    const file = (i: number): string => `node_modules/pkg${String(i % 100).padStart(3, '0')}/lib/f${i}.js`;
    // Status is asked all along the churn; the slowest answer is kept.
    const asker = askStatusAllAlong(async () => (await sendControl<DaemonStatus>(h!.socketPath, { verb: 'status' }, 30_000), true));
    let figures = { answered: 0, slowestMs: 0 };
    try {
      for (let i = 0; i < 5_000; i++) await put(m, file(i), `module ${i}\n`);
      await new Promise((r) => setTimeout(r, 2_000)); // the workload's own timing: npm deletes what it unpacked 2 s later
      await rm(join(m, 'node_modules'), { recursive: true });
      for (let i = 0; i < 2_500; i++) await put(m, file(i), `module ${i} again\n`);
      await convergeTruthfully(h, 'the package churn on Box', 400_000, 30_000);
    } finally {
      figures = await asker.stop();
    }
    const loop = (await sendControl<DaemonStatus>(h.socketPath, { verb: 'status' })).eventLoop;
    // Printed, not asserted against a speed (CI machines are shared); the benchmark's churn row reports it too.
    const { answered, slowestMs: slowest } = figures;
    console.log(`package churn: status answered ${answered} times during the churn, the slowest in ${slowest} ms; event loop blocked at most ${loop.maxDelayMs} ms (p99 ${loop.p99DelayMs} ms)`);
    expect(loop.maxDelayMs).toBeGreaterThanOrEqual(loop.p99DelayMs);
    expect(answered).toBeGreaterThan(10);
    // Generous: the event loop blocked for minutes before (13 min at 10,000 files); status must answer in seconds.
    expect(slowest).toBeLessThan(30_000);
    expect(h.web.findByPath(`Mirror/${file(2_499)}`)?.type).toBe('file');
    expect(h.web.findByPath(`Mirror/${file(2_500)}`) ?? null).toBeNull();
  }, 600_000);

  it('atomic saves (5 documents, 50 saves each: temp file renamed over the document) all reach Box, the last save of each included', async () => {
    h = await createClosed();
    const m = h.mirror;
    for (let d = 1; d <= 5; d++) await put(m, `docs/doc${d}.docx`, `doc${d} save 0\n`);
    run = await h.start();
    await convergeTruthfully(h, 'the documents on Box');
    for (let k = 1; k <= 50; k++) {
      for (let d = 1; d <= 5; d++) {
        const tmp = join(m, 'docs', `.~doc${d}.docx.${k}.tmp`);
        await writeFile(tmp, `doc${d} save ${k}\n${'x'.repeat(k * 100)}\n`);
        await rename(tmp, join(m, 'docs', `doc${d}.docx`));
      }
      await new Promise((r) => setTimeout(r, 20 + (k % 5) * 15)); // the saves' own pace, not a wait for the daemon
    }
    await convergeTruthfully(h, 'the last saves on Box');
    for (let d = 1; d <= 5; d++) {
      const st = await sendControl<PathStatus>(h.socketPath, { verb: 'status-path', path: join(m, 'docs', `doc${d}.docx`) });
      expect(st.state, `doc${d}.docx: ${st.detail}`).toBe('in-sync');
    }
  }, 420_000);

  it('a failure filed as replan is retried by the daemon\'s timer (nothing else happens meanwhile)', async () => {
    h = await createClosed();
    run = await h.start();
    // Every upload of it answers 412 until the item is parked: the failure is filed as replan, with a retry time.
    h.srv.control.failNext({ method: 'POST', path: /^\/api\/2\.0\/files(\/[^/]+)?\/content$/, status: 412, count: 4 });
    await put(h.mirror, 'report.txt', 'final\n');
    const failed = await waitFor(async () => (await h!.status()).engine.errors.find((e) => e.path === 'report.txt' && e.nextRetryAtMs !== null), {
      timeoutMs: 60_000,
      what: 'report.txt filed as failed with a retry time',
    });
    expect(failed.code).toBe('precondition_failed');
    // No other change, no sync-now: the retry timer alone brings it to Box once its delay is over.
    await waitFor(() => h!.web.findByPath('Mirror/report.txt'), { timeoutMs: failed.nextRetryAtMs! - Date.now() + 60_000, intervalMs: 500, what: 'report.txt on Box' });
    await convergeTruthfully(h, 'report.txt in sync');
  }, 300_000);
});
