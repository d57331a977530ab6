/**
 * `boxsync demo-live --check`: the README's live main job on the embedded default, as a real child process.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';

describe('boxsync demo-live', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await makeTempDir('boxsync-live-')));
  afterEach(async () => cleanup());

  it('mirrors the sample content live and shows one change each way within seconds', async () => {
    const r = await runCli(['demo-live', '--check', '--dir', dir], { timeoutMs: 90_000 });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/boxsync daemon \(pid \d+, up \d+ s\): idle/);
    // inotify when `npm ci` built the native watcher (CI does), dirs (fs.watch per folder) when it could not.
    expect(r.stdout).toMatch(/watcher \((?:inotify|dirs)\): ok, \d+ inotify watches/);
    const down = /web -> disk: {2}"From the web.txt" appeared in the mirror after (\d+) ms/.exec(r.stdout);
    const up = /disk -> web: {2}"From this machine.txt" reached box-server after (\d+) ms/.exec(r.stdout);
    expect(down).not.toBeNull();
    expect(up).not.toBeNull();
    expect(await readFile(join(dir, 'Box', 'From the web.txt'), 'utf8')).toMatch(/Written on box-server/);
    expect((await readFile(join(dir, 'config.json'), 'utf8')).length).toBeGreaterThan(10);
  });
});
