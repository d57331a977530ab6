/**
 * bin/boxsync.js picks what a build runs: `boxsync sync` the one-script bundle (scripts/bundle-cli.mjs) through the
 * code cache's loader (bin/code-cache.js; test/cli/code-cache.test.ts), every other command dist/cli/main.js, and
 * `sync` too when the bundle is missing or older than main.js (a build left half done); `sync --once` the hand-off
 * script first (src/cli/hand-off-first.ts), and the bundle after it only when it handed nothing to a daemon. Run on a copy of
 * bin/boxsync.js (and bin/malloc-rule.js and bin/code-cache.js, which it imports) in a temp root whose dist/ holds
 * two stand-ins that say which one ran.
 */
import { spawnSync } from 'node:child_process';
import { copyFile, mkdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';

describe('bin/boxsync.js over a build', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  const bin = (): string => join(tmp.dir, 'bin', 'boxsync.js');
  const bundle = (): string => join(tmp.dir, 'dist', 'cli-script', 'main.cjs');
  const ran = (...args: string[]): string => {
    const r = spawnSync(process.execPath, [bin(), ...args], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, BOXSYNC_FROM_SOURCE: '', XDG_CACHE_HOME: join(tmp.dir, 'cache') } });
    expect(r.status, r.stderr).toBe(0);
    return r.stdout.trim();
  };

  beforeAll(async () => {
    tmp = await makeTempDir('boxsync-bin-');
    await mkdir(join(tmp.dir, 'bin'));
    await mkdir(join(tmp.dir, 'dist', 'cli'), { recursive: true });
    await mkdir(join(tmp.dir, 'dist', 'cli-script'));
    await copyFile(join(repoRoot, 'bin', 'boxsync.js'), bin());
    // What it imports before anything else (the malloc tuning rule).
    await copyFile(join(repoRoot, 'bin', 'malloc-rule.js'), join(tmp.dir, 'bin', 'malloc-rule.js'));
    await copyFile(join(repoRoot, 'bin', 'code-cache.js'), join(tmp.dir, 'bin', 'code-cache.js'));
    await writeFile(join(tmp.dir, 'package.json'), '{"type":"module"}');
    await writeFile(join(tmp.dir, 'dist', 'cli', 'main.js'), "process.stdout.write('main ' + process.argv.slice(2).join(' '));\n");
    // A script as the bundle is: a module wrapper function, its run handed back as `done`.
    await writeFile(bundle(), "(function (exports) {\nexports.done = Promise.resolve(process.stdout.write('bundle ' + process.argv.slice(2).join(' ')));\n})");
  });
  afterAll(async () => tmp?.cleanup());

  it('runs the bundle for `sync` (after global options too) and main.js for every other command', () => {
    expect(ran('sync', '--once')).toBe('bundle sync --once');
    expect(ran('-v', 'sync', '--once')).toBe('bundle -v sync --once');
    expect(ran('status')).toBe('main status');
    expect(ran('daemon', '--config', 'sync')).toBe('main daemon --config sync');
    expect(ran('--version')).toBe('main --version');
  });

  it('runs main.js for `sync` when the bundle is older than main.js', async () => {
    const old = new Date(Date.now() - 3600_000);
    await utimes(bundle(), old, old);
    expect(ran('sync', '--once')).toBe('main sync --once');
    await utimes(bundle(), new Date(), new Date());
  });

  it('runs the hand-off script first for `sync --once`: the bundle only when it did not hand the run to a daemon', async () => {
    const handOff = join(tmp.dir, 'dist', 'cli-script', 'hand-off.cjs');
    // A stand-in as the script is: `done` is the exit code of a run handed over, or null (no daemon).
    const standIn = (handled: boolean): string =>
      `(function (exports) {\nprocess.stdout.write('hand-off ' + process.argv.slice(2).join(' ') + '; ');\nexports.done = Promise.resolve(${handled ? '0' : 'null'});\n})`;
    await writeFile(handOff, standIn(false));
    expect(ran('sync', '--once', '--config', 'c.json')).toBe('hand-off sync --once --config c.json; bundle sync --once --config c.json');
    // Not for a `sync` without --once, nor for another command.
    expect(ran('sync', '--dry-run')).toBe('bundle sync --dry-run');
    expect(ran('status', '--once')).toBe('main status --once');
    await writeFile(handOff, standIn(true));
    expect(ran('-v', 'sync', '--once')).toBe('hand-off -v sync --once;');
    // A script older than main.js (a build left half done) is not run.
    const old = new Date(Date.now() - 3600_000);
    await utimes(handOff, old, old);
    expect(ran('sync', '--once')).toBe('bundle sync --once');
  });
});
