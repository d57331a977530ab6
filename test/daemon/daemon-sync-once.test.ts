/**
 * `sync --once` while the daemon runs (cli/commands/sync.ts handToDaemon, lifecycle/session.ts syncOnce): the run
 * is handed to the daemon instead of refused. Through the real CLI against a real daemon child and box-server: the
 * answer comes once a pass that looked at every change made before the command is over (the watcher's barrier for
 * local changes, the event stream from the cursor for Box's), so what was changed on either side just before is on
 * the other side when the command exits; the exit codes are a run's own. A watcher that cannot confirm (chokidar)
 * gets a full scan, said; --bwlimit is refused; a daemon that holds the lock but does not answer is said.
 */
import { watch } from 'node:fs';
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { runCli, type CliResult } from '../support/cli.js';
import { createHarness, type Harness } from './daemon-harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const syncOnce = (hh: Harness, args: readonly string[] = []): Promise<CliResult> =>
  runCli(['sync', '--once', '--config', hh.configFile, ...args], { env: { BOXSYNC_LOG_LEVEL: 'warn' }, timeoutMs: 120_000 });

const explain = (r: CliResult): string => `exit ${r.code}\n--- stdout ---\n${r.stdout}\n--- stderr ---\n${r.stderr}`;

it('is handed to the running daemon: changes made on both sides just before are synced when it exits, with its summary and exit code', async () => {
  h = await createHarness();
  const hh = h;
  h.web.uploadFile(h.rootId, 'before.txt', 'there at the start\n');
  const run = await h.start({ BOXSYNC_UPLOAD_GROWING_EVERY_SEC: '3600' });
  const passesBefore = (await h.status()).passes;

  // Made just before the command: no settle time has passed for the watcher, nor a long poll round for Box.
  for (let i = 0; i < 12; i++) await writeFile(join(h.mirror, `local-${i}.txt`), `local ${i}\n`);
  await mkdir(join(h.mirror, 'new', 'deep'), { recursive: true });
  await writeFile(join(h.mirror, 'new', 'deep', 'inside.txt'), 'in a new folder\n');
  h.web.uploadFile(h.rootId, 'from-box.txt', 'made on Box\n');
  const r = await syncOnce(h);

  expect(r.code, `${explain(r)}\n--- daemon ---\n${run.output()}`).toBe(0);
  expect(r.stderr).toMatch(/the daemon \(pid \d+\) is syncing .*: this run is handed to it/);
  expect(r.stdout).toMatch(/^boxsync: converged/m);
  // On the other side the moment the command is over, with no waiting here.
  for (let i = 0; i < 12; i++) expect(hh.web.findByPath(`Mirror/local-${i}.txt`), `local-${i}.txt on Box`).not.toBeNull();
  const inside = h.web.findByPath('Mirror/new/deep/inside.txt');
  expect(inside?.type).toBe('file');
  expect(h.web.readFile(inside!.id).toString()).toBe('in a new folder\n');
  expect(await readFile(join(h.mirror, 'from-box.txt'), 'utf8')).toBe('made on Box\n');
  // The daemon ran it: one process on the state dir, and its pass count moved.
  expect((await h.status()).passes).toBeGreaterThan(passesBefore);
  expect(run.child.exitCode).toBeNull();

  // Nothing changed since: converged, nothing transferred.
  const again = await syncOnce(h);
  expect(again.code, explain(again)).toBe(0);
  expect(again.stdout).toMatch(/^boxsync: converged/m);
  expect(again.stderr).not.toContain('local-0.txt');

  // A file written every 40 ms never settles for the daemon's watcher (150 ms of quiet), so the daemon would not
  // upload it on its own for a minute; the barrier hands it on, so the pass the command waits for uploads it and
  // prints it. The writing stops once the barrier's file appears (what the daemon makes when the request comes).
  const growing = join(h.mirror, 'growing.log');
  await writeFile(growing, 'line 0\n');
  let stop = false;
  const seen = watch(h.mirror, (_e, name) => {
    if (typeof name === 'string' && name.startsWith('.boxsync-tmp-')) stop = true;
  });
  const writer = (async () => {
    for (let i = 1; !stop && i < 3_000; i++) {
      await appendFile(growing, `line ${i}\n`);
      await new Promise((res) => setTimeout(res, 40));
    }
  })();
  const mid = await syncOnce(h).finally(() => (stop = true));
  await writer;
  seen.close();
  expect(mid.code, `${explain(mid)}\n--- daemon ---\n${run.output()}`).toBe(0);
  expect(mid.stderr).toContain('growing.log');
  expect(mid.stdout).toMatch(/^boxsync: converged in .*: \d+ downloaded \(.*\), [1-9]\d* uploaded/m);
  expect(h.web.findByPath('Mirror/growing.log')).not.toBeNull();

  // --full-rescan is handed on too.
  await writeFile(join(h.mirror, 'full.txt'), 'full\n');
  const full = await syncOnce(h, ['--full-rescan']);
  expect(full.code, explain(full)).toBe(0);
  expect(h.web.findByPath('Mirror/full.txt')).not.toBeNull();

  // --bwlimit cannot apply to a pass the daemon runs at its own limit: refused, nothing run.
  const bw = await syncOnce(h, ['--bwlimit', '1M']);
  expect(bw.code, explain(bw)).toBe(2);
  expect(bw.stderr).toContain('`boxsync bwlimit RATE` sets the daemon\'s limit now');

  // A guard id that is not held: refused by the daemon, nothing run, exit 2.
  const conf = await syncOnce(h, ['--confirm', `mass-delete:${h.rootId}:5`]);
  expect(conf.code, explain(conf)).toBe(2);
  expect(conf.stderr).toMatch(/did not run the pass: no safety guard with id mass-delete:.* is held/);
  // The daemon keeps running through all of it.
  expect(run.child.exitCode).toBeNull();
});

it('a watcher that cannot confirm it reported everything (chokidar): the folder is scanned in full, and the run says so', async () => {
  h = await createHarness();
  await h.start({ BOXSYNC_WATCHER: 'chokidar' });
  await writeFile(join(h.mirror, 'seen-by-scan.txt'), 'scanned\n');
  const r = await syncOnce(h);
  expect(r.code, explain(r)).toBe(0);
  expect(r.stderr).toMatch(/was scanned in full: the chokidar watcher cannot confirm it has reported every change/);
  expect(h.web.findByPath('Mirror/seen-by-scan.txt')).not.toBeNull();
});

it('a paused daemon: refused (no transfer would start), exit 2, and it says how to go on', async () => {
  h = await createHarness();
  await h.start();
  const paused = await runCli(['pause', '--config', h.configFile], { timeoutMs: 60_000 });
  expect(paused.code, explain(paused)).toBe(0);
  const r = await syncOnce(h);
  expect(r.code, explain(r)).toBe(2);
  expect(r.stderr).toContain('the daemon is paused');
  expect(r.stderr).toContain('`boxsync resume`');
});
