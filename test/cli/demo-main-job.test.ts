/**
 * `boxsync demo`, the README's main command, as a real child process: box-server with sample content in the
 * demo process, a config pointing at it, two rounds of `sync --once`, exit 0, and the mirror on disk.
 */
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, spawnCli } from '../support/cli.js';
import { waitFor } from '../support/wait.js';
import { makeTempDir } from '../support/tmp.js';
import { explain, listTree } from './sync-harness.js';

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

describe('boxsync demo', () => {
  it('--dir DIR: mirrors the sample content two ways, prints where it is, and exits 0', async () => {
    const t = await makeTempDir('boxsync-demo-test-');
    cleanup = t.cleanup;
    const r = await runCli(['demo', '--dir', t.dir], { timeoutMs: 120_000 });
    expect(r.code, explain(r)).toBe(0);
    const mirror = join(t.dir, 'Box');
    expect(r.stdout).toContain(`mirror:                         ${mirror}`);
    expect(r.stdout).toMatch(/Round 1[\s\S]*boxsync: converged[\s\S]*Round 2[\s\S]*boxsync: converged/);
    expect(r.stdout).toContain('"From the web.txt" is now in the mirror');
    expect(r.stdout).toContain('"From this machine.txt" is now on box-server');

    expect(await listTree(mirror)).toEqual([
      'Box developer docs.url',
      'Documents/',
      'Documents/Notes/',
      'Documents/Notes/monday.txt',
      'Documents/Notes/tuesday.txt',
      'Documents/plan.md',
      'From the web.txt',
      'From this machine.txt',
      'Photos/',
      'Photos/caption.txt',
      'README.txt',
    ]);
    expect(await readFile(join(mirror, 'Documents', 'Notes', 'monday.txt'), 'utf8')).toBe('Monday: call the plumber.\n');

    // The config holds the developer token: private to the user, and never echoed.
    const configFile = join(t.dir, 'config.json');
    expect((await stat(configFile)).mode & 0o777).toBe(0o600);
    const config = JSON.parse(await readFile(configFile, 'utf8')) as { auth: { developerToken: string } };
    expect(r.stdout + r.stderr).not.toContain(config.auth.developerToken);
  });

  it('without --dir: uses a fresh temp folder and says where', async () => {
    const t = await makeTempDir('boxsync-demo-tmp-');
    cleanup = t.cleanup;
    const r = await runCli(['demo'], { env: { TMPDIR: t.dir }, timeoutMs: 120_000 });
    expect(r.code, explain(r)).toBe(0);
    const m = /^mirror:\s+(\S+)$/m.exec(r.stdout);
    expect(m?.[1]).toBeDefined();
    expect(m![1]!.startsWith(join(t.dir, 'boxsync-demo-'))).toBe(true);
    expect(await listTree(m![1]!)).toContain('README.txt');
  });

  it('--keep: box-server stays up for a hand-run `sync --once`, and Ctrl-C ends the demo with 0', async () => {
    const t = await makeTempDir('boxsync-demo-keep-');
    cleanup = t.cleanup;
    const child = spawnCli(['demo', '--dir', t.dir, '--keep']);
    let stdout = '';
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      await waitFor(() => stdout.includes('press Ctrl-C to stop it'), { timeoutMs: 90_000, what: 'the demo to finish its rounds' });
      await writeFile(join(t.dir, 'Box', 'by hand.txt'), 'typed by a person\n');
      const r = await runCli(['sync', '--once', '--config', join(t.dir, 'config.json')]);
      expect(r.code, explain(r)).toBe(0);
      expect(r.stdout).toMatch(/boxsync: converged .*1 uploaded/);
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
  });
});
