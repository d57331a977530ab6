/**
 * `boxsync sync --once` while a daemon runs, handed over before the sync bundle loads (src/cli/hand-off-first.ts,
 * run by bin/boxsync.js as dist/cli-script/hand-off.cjs). What command lines it takes whole (and that each option
 * it reads is the `sync` command's own), when it leaves the run to the long way (no daemon, a stale lock, another
 * process's lock, a config it cannot read: null, nothing written), and a real hand-off: in this process against a
 * real daemon child, and as the built script (esbuild with the build's own options, run through bin/code-cache.js in
 * a child process), which holds no config schema and no engine.
 */
import { spawn } from 'node:child_process';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handOffArgs, handOffFirst } from '../../src/cli/hand-off-first.js';
import { cliProgram } from '../../src/cli/run-cli.js';
import { repoRoot } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';
import { capturedStreams } from '../support/captured-streams.js';
import { createHarness, type Harness } from '../daemon/daemon-harness.js';
// @ts-expect-error: a plain JavaScript build script without types
import { cliScriptOptions } from '../../scripts/bundle-plugins.mjs';

describe('the command lines the hand-off takes whole', () => {
  it('takes `sync --once` with -c/--config, --full-rescan, --confirm (repeated) and -v, in any order', () => {
    expect(handOffArgs(['sync', '--once'])).toEqual({ configPath: undefined, fullRescan: false, confirm: [] });
    expect(handOffArgs(['-v', 'sync', '--config', '/c.json', '--once', '--full-rescan'])).toEqual({ configPath: '/c.json', fullRescan: true, confirm: [] });
    expect(handOffArgs(['sync', '--once', '-c', 'rel.json', '--verbose'])).toEqual({ configPath: 'rel.json', fullRescan: false, confirm: [] });
    expect(handOffArgs(['sync', '--config=/x.json', '--confirm', 'mass-delete:r:5', '--once', '--confirm=local-root-empty:r'])).toEqual({
      configPath: '/x.json',
      fullRescan: false,
      confirm: ['mass-delete:r:5', 'local-root-empty:r'],
    });
  });

  it('leaves everything else to the long way', () => {
    for (const args of [
      ['sync'],
      ['sync', '--full-rescan'],
      ['status'],
      ['daemon', '--once'],
      ['--once', 'sync'],
      ['sync', '--once', '--bwlimit', '1M'],
      ['sync', '--once', '--dry-run'],
      ['sync', '--once', '-n'],
      ['sync', '--once', '--accept-new-root', '/x'],
      ['sync', '--once', '--help'],
      ['sync', '--once', '--config'],
      ['sync', '--once', '--config', '--full-rescan'],
      ['sync', '--once', '--config', 'a.json', '--config', 'b.json'],
      ['sync', '--once', '--confirm'],
      ['sync', '--once', 'extra'],
      ['sync', '--once', '--'],
      ['sync', 'sync', '--once'],
    ]) {
      expect(handOffArgs(args), args.join(' ')).toBeNull();
    }
  });

  it('reads each option as the `sync` command declares it', () => {
    const program = cliProgram();
    const sync = program.commands.find((c) => c.name() === 'sync');
    const flags = new Map(sync?.options.map((o) => [o.long, o.flags]));
    expect(flags.get('--once')).toBe('--once');
    expect(flags.get('--config')).toBe('-c, --config <file>');
    expect(flags.get('--full-rescan')).toBe('--full-rescan');
    expect(flags.get('--confirm')).toBe('--confirm <id>');
    expect(program.options.find((o) => o.long === '--verbose')?.flags).toBe('-v, --verbose');
  });
});

describe('without a daemon', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  beforeAll(async () => (tmp = await makeTempDir('boxsync-hand-off-')));
  afterAll(async () => tmp?.cleanup());

  it('answers null and writes nothing: no lock, a stale lock, a lock of another run, a config it cannot read', async () => {
    const state = join(tmp.dir, 'state');
    const config = join(tmp.dir, 'config.json');
    await writeFile(config, JSON.stringify({ stateDir: state, socketPath: join(tmp.dir, 'c.sock'), folders: [] }));
    const args = ['sync', '--once', '--config', config];
    const c = capturedStreams();

    // No state dir at all: none is made.
    expect(await handOffFirst(args, process.env, c.streams)).toBeNull();
    await expect(readdir(state)).rejects.toMatchObject({ code: 'ENOENT' });

    // A daemon's lock whose process is gone (a pid no process has: above the kernel's pid limit).
    await mkdir(state);
    await writeFile(join(state, 'lock'), JSON.stringify({ pid: 2 ** 22 + 1, purpose: 'daemon', startedAtMs: 1, startTicks: null }));
    expect(await handOffFirst(args, process.env, c.streams)).toBeNull();
    // A live process's lock that is not a daemon's (this test, as a `sync --once`): the long way refuses it.
    await writeFile(join(state, 'lock'), JSON.stringify({ pid: process.pid, purpose: 'sync --once', startedAtMs: 1, startTicks: null }));
    expect(await handOffFirst(args, process.env, c.streams)).toBeNull();
    expect((await readdir(state)).sort()).toEqual(['lock']);

    // The config: missing, not JSON, not an object, a path key that is not a string.
    await writeFile(join(state, 'lock'), JSON.stringify({ pid: process.pid, purpose: 'daemon', startedAtMs: 1, startTicks: null }));
    expect(await handOffFirst(['sync', '--once', '--config', join(tmp.dir, 'none.json')], process.env, c.streams)).toBeNull();
    for (const [i, text] of ['{"stateDir": ', '[1]', JSON.stringify({ stateDir: 5 }), JSON.stringify({ stateDir: state, socketPath: ['x'] })].entries()) {
      const bad = join(tmp.dir, `bad-${i}.json`);
      await writeFile(bad, text);
      expect(await handOffFirst(['sync', '--once', '--config', bad], process.env, c.streams), text).toBeNull();
    }
    // A command line it does not take: not even the config is read.
    expect(await handOffFirst(['sync', '--once', '--bwlimit', '1M', '--config', config], process.env, c.streams)).toBeNull();
    expect(c.out() + c.err()).toBe('');
  });
});

describe('with a daemon running', () => {
  let h: Harness | undefined;
  let tmp: { dir: string; cleanup: () => Promise<void> } | undefined;
  afterAll(async () => {
    await h?.close();
    await tmp?.cleanup();
  });

  it('hands the run over, in this process and as the built script, with the run\'s summary and exit codes', async () => {
    h = await createHarness();
    const hh = h;
    const run = await h.start();
    await writeFile(join(h.mirror, 'local.txt'), 'made just before\n');
    h.web.uploadFile(h.rootId, 'remote.txt', 'made on Box\n');
    const c = capturedStreams();
    // The config found as every command finds it: here through $BOXSYNC_CONFIG.
    const code = await handOffFirst(['sync', '--once'], { ...process.env, BOXSYNC_CONFIG: h.configFile }, c.streams);
    expect(code, `${c.err()}\n--- daemon ---\n${run.output()}`).toBe(0);
    expect(c.err()).toMatch(/the daemon \(pid \d+\) is syncing .*: this run is handed to it/);
    expect(c.err()).toContain('local.txt');
    expect(c.out()).toMatch(/^boxsync: converged/m);
    expect(hh.web.findByPath('Mirror/local.txt')).not.toBeNull();
    expect(await readFile(join(hh.mirror, 'remote.txt'), 'utf8')).toBe('made on Box\n');

    // A guard the daemon does not hold: refused by the daemon, exit 2.
    const refused = capturedStreams();
    expect(await handOffFirst(['sync', '--once', '--config', h.configFile, '--confirm', `mass-delete:${h.rootId}:5`], process.env, refused.streams)).toBe(2);
    expect(refused.err()).toMatch(/did not run the pass: no safety guard with id mass-delete:.* is held/);

    // The built script: bundled with the build's options from the sources, run as bin/boxsync.js runs it.
    tmp = await makeTempDir('boxsync-hand-off-script-');
    const outfile = join(tmp.dir, 'cli-script', 'hand-off.cjs');
    const built = await build({ ...cliScriptOptions(join(repoRoot, 'src', 'cli', 'hand-off-main.ts'), outfile), metafile: true });
    const inputs = Object.keys((built.metafile as Metafile).inputs);
    // Small, and none of what only the long way needs: the config's schema, the engine, the journal, got.
    expect(inputs.filter((f) => /node_modules[\\/](zod|got|better-sqlite3|pino|commander)[\\/]|src[\\/](engine|journal|remote)[\\/]|src[\\/]config[\\/](schema|index)\.ts/.test(f))).toEqual([]);
    expect(Object.values((built.metafile as Metafile).outputs)[0]!.bytes).toBeLessThan(200_000);
    const runner = join(tmp.dir, 'run.mjs');
    await writeFile(
      runner,
      `const { runHandOffScript } = await import(${JSON.stringify(pathToFileURL(join(repoRoot, 'bin', 'code-cache.js')).href)});\n` +
        `const handled = await runHandOffScript(${JSON.stringify(outfile)});\n` +
        `if (!handled) process.stdout.write('not handled');\n`,
    );
    await writeFile(join(h.mirror, 'second.txt'), 'second\n');
    const child = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const p = spawn(process.execPath, [runner, 'sync', '--once', '--config', hh.configFile], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
      let stdout = '';
      let stderr = '';
      p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      p.on('error', reject);
      p.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    expect(child.code, `${child.stdout}\n${child.stderr}`).toBe(0);
    expect(child.stdout).toMatch(/^boxsync: converged/m);
    expect(child.stderr).toMatch(/the daemon \(pid \d+\) is syncing .*: this run is handed to it/);
    expect(hh.web.findByPath('Mirror/second.txt')).not.toBeNull();
    expect(run.child.exitCode).toBeNull();
  }, 180_000);
});
