/**
 * `boxsync sync` from a build runs the one-script bundle with a V8 code cache (bin/code-cache.js): the second run
 * uses what the first one wrote; a cache file that is garbage, damaged, too big, or made for another bundle is never
 * handed to V8 as this bundle's code and is replaced; a cache dir that cannot be written, or that others may write
 * to, leaves the run as it was. What happened is read from BOXSYNC_CODE_CACHE_REPORT=1's line, never from timing.
 *
 * The build is made here, in a temp root laid out as a package (bin/, dist/cli-script/main.cjs, package.json, and
 * node_modules and build/ linked to this checkout's): the bundle is made from the sources with the options of
 * scripts/bundle-cli.mjs (scripts/bundle-plugins.mjs), and dist/cli/main.js is only a stand-in that must not run.
 * Real child processes, a real box-server, real files.
 */
import { spawn } from 'node:child_process';
import { appendFile, chmod, copyFile, mkdir, readdir, readFile, stat, symlink, truncate, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';
import { listTree, startSyncEnv, type SyncEnv } from './sync-harness.js';
// @ts-expect-error: a plain JavaScript build script without types
import { asciiOnly, cliScriptOptions } from '../../scripts/bundle-plugins.mjs';

interface Run {
  readonly code: number | null;
  readonly stderr: string;
  readonly stdout: string;
  /** The code cache's report lines, without the `boxsync: code cache: ` prefix. */
  readonly cache: string[];
}

describe('the code cache of `boxsync sync` (a build)', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let env: SyncEnv & { readonly remoteRootId: string };
  const root = (): string => join(tmp.dir, 'pkg');
  const script = (): string => join(root(), 'dist', 'cli-script', 'main.cjs');

  /** `boxsync sync --once` through the package's bin/boxsync.js, with XDG_CACHE_HOME = `cacheHome`. */
  const sync = (cacheHome: string, extraEnv: NodeJS.ProcessEnv = {}, configFile = env.configFile): Promise<Run> =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [join(root(), 'bin', 'boxsync.js'), 'sync', '--once', '--config', configFile], {
        cwd: tmp.dir,
        env: { ...process.env, BOXSYNC_FROM_SOURCE: '', BOXSYNC_LOG_LEVEL: 'warn', BOXSYNC_CODE_CACHE_REPORT: '1', XDG_CACHE_HOME: cacheHome, ...extraEnv },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      let stdout = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`boxsync sync did not exit within 90 s\n${stderr}`));
      }, 90_000);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        const cache = stderr
          .split('\n')
          .filter((l) => l.startsWith('boxsync: code cache: '))
          .map((l) => l.slice('boxsync: code cache: '.length));
        resolve({ code, stderr, stdout, cache });
      });
    });
  const cacheDir = (home: string): string => join(home, 'boxsync', 'code-cache');
  const cacheFiles = async (home: string): Promise<string[]> => (await readdir(cacheDir(home))).sort();

  beforeAll(async () => {
    tmp = await makeTempDir('boxsync-code-cache-');
    await mkdir(join(root(), 'bin'), { recursive: true });
    await mkdir(join(root(), 'dist', 'cli'), { recursive: true });
    for (const f of ['boxsync.js', 'malloc-rule.js', 'code-cache.js']) await copyFile(join(repoRoot, 'bin', f), join(root(), 'bin', f));
    await copyFile(join(repoRoot, 'package.json'), join(root(), 'package.json'));
    await symlink(join(repoRoot, 'node_modules'), join(root(), 'node_modules'));
    await symlink(join(repoRoot, 'build'), join(root(), 'build'));
    // Must not run: `sync` is the bundle's. Older than the bundle, as after a whole build.
    await writeFile(join(root(), 'dist', 'cli', 'main.js'), "process.stderr.write('dist/cli/main.js ran\\n'); process.exitCode = 9;\n");
    const old = new Date(Date.now() - 3600_000);
    await utimes(join(root(), 'dist', 'cli', 'main.js'), old, old);
    await build(cliScriptOptions(join(repoRoot, 'src', 'cli', 'script-main.ts'), script()));
    asciiOnly(script());
    env = await startSyncEnv();
    const docs = env.web.createFolder(env.remoteRootId, 'docs');
    for (let i = 0; i < 5; i++) env.web.uploadFile(docs.id, `f${i}.txt`, `file ${i}\n`);
  }, 120_000);
  afterAll(async () => {
    await env?.close();
    await tmp?.cleanup();
  });

  it('a first run compiles and writes the cache (0600 in a 0700 folder); the next run uses it', async () => {
    const home = join(tmp.dir, 'cache-a');
    const first = await sync(home);
    expect(first.code, first.stderr).toBe(0);
    expect(first.cache).toEqual(['none; compiled', expect.stringMatching(/^written .*\/boxsync\/code-cache\/sync-[0-9a-f]{32}\.v8$/)]);
    expect(await listTree(env.mirror)).toEqual(expect.arrayContaining(['docs/', 'docs/f0.txt', 'docs/f4.txt']));
    const [file] = await cacheFiles(home);
    expect((await stat(cacheDir(home))).mode & 0o777).toBe(0o700);
    expect((await stat(join(cacheDir(home), file!))).mode & 0o777).toBe(0o600);
    // Compiled code only: nothing of the run's data (the token, the config's paths).
    const bytes = await readFile(join(cacheDir(home), file!));
    expect(bytes.includes(Buffer.from(env.configFile))).toBe(false);
    expect(bytes.includes(Buffer.from('e2e-secret-token-T'))).toBe(false);

    const second = await sync(home);
    expect(second.code, second.stderr).toBe(0);
    expect(second.cache).toEqual([`used ${join(cacheDir(home), file!)}`]);
    expect(await cacheFiles(home)).toEqual([file]);
  });

  it('a cache made by a run that stopped early is made again by the next run that exits 0, and only by that one', async () => {
    const home = join(tmp.dir, 'cache-f');
    const early = await sync(home, {}, join(tmp.dir, 'no-such-config.json'));
    expect(early.code).toBe(2);
    expect(early.cache).toEqual(['none; compiled', expect.stringMatching(/^written /)]);
    const [file] = await cacheFiles(home);
    const path = join(cacheDir(home), file!);
    const whole = await sync(home);
    expect(whole.code, whole.stderr).toBe(0);
    expect(whole.cache).toEqual([`used ${path}`, `written ${path}`]);
    expect((await sync(home)).cache).toEqual([`used ${path}`]);
    // A run that stops early again leaves the whole run's cache as it is.
    expect((await sync(home, {}, join(tmp.dir, 'no-such-config.json'))).cache).toEqual([`used ${path}`]);
  });

  it('a run that exits 0 ends without Node\'s teardown, after its output and the journal\'s clean close; a run that fails ends as before', async () => {
    const home = join(tmp.dir, 'cache-x');
    const first = await sync(home);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain('boxsync: exit: without teardown\n');
    // The whole output, through a pipe: one line for each file of the run, then the summary.
    expect(first.stdout).toMatch(/boxsync: converged in \d+ ms .*\n$/);
    // The journal was closed cleanly before: its clean mark is there and no WAL is left.
    const after = await readdir(env.stateDir);
    expect(after).toContain('journal.db.clean');
    expect(after).not.toContain('journal.db-wal');
    expect(after).not.toContain('lock');
    const noChange = await sync(home);
    expect(noChange.code, noChange.stderr).toBe(0);
    expect(noChange.stderr).toContain('boxsync: exit: without teardown\n');
    expect(noChange.stdout).toMatch(/boxsync: converged in \d+ ms \(1 pass\): 0 downloaded/);
    const failed = await sync(home, {}, join(tmp.dir, 'no-such-config.json'));
    expect(failed.code).toBe(2);
    expect(failed.stderr).not.toContain('boxsync: exit:');
  });

  it('BOXSYNC_PHASES=1 prints, at exit, when each part of the run was reached, in order; without it nothing is printed', async () => {
    const home = join(tmp.dir, 'cache-p');
    const plain = await sync(home);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).not.toContain('boxsync: phases');
    const run = await sync(home, { BOXSYNC_PHASES: '1' });
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stderr.split('\n').filter((l) => l.startsWith('boxsync: phases: '));
    expect(lines).toHaveLength(1);
    const marks = lines[0]!.slice('boxsync: phases: '.length).split(', ').map((p) => /^([a-z ]+) (\d+\.\d)$/.exec(p));
    expect(marks.every((m) => m !== null), lines[0]).toBe(true);
    // The CLI's own parts in this order, with the engine's phases (the first time each is reached) between
    // 'composed' and 'pass done'.
    const names = marks.map((m) => m![1]!);
    const cli = ['entry', 'loader', 'compiled', 'cli', 'command', 'config and lock', 'logger', 'composed', 'pass done', 'closed', 'run over', 'exit'];
    expect(names.filter((n) => cli.includes(n))).toEqual(cli);
    const engine = names.slice(names.indexOf('composed') + 1, names.indexOf('pass done'));
    expect(engine).toEqual(expect.arrayContaining(['listing', 'planning', 'idle']));
    expect(new Set(engine).size).toBe(engine.length);
    expect(names.filter((n) => !cli.includes(n) && !engine.includes(n))).toEqual([]);
    const times = marks.map((m) => Number(m![2]));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(times[0]).toBeGreaterThan(0);
    // A run that stops early (no config) marks what it reached, and still prints the line.
    const early = await sync(home, { BOXSYNC_PHASES: '1' }, join(tmp.dir, 'no-such-config.json'));
    expect(early.code).toBe(2);
    expect(early.stderr).toMatch(/^boxsync: phases: entry [\d.]+, loader [\d.]+, compiled [\d.]+, cli [\d.]+, command [\d.]+, run over [\d.]+, exit [\d.]+$/m);
  });

  it('a cache file that is garbage, too big, damaged or refused by V8 is not used, and is replaced', async () => {
    const home = join(tmp.dir, 'cache-b');
    expect((await sync(home)).code).toBe(0);
    const [file] = await cacheFiles(home);
    const path = join(cacheDir(home), file!);
    const good = await readFile(path);

    await writeFile(path, 'not a code cache at all\n', { mode: 0o600 });
    const garbage = await sync(home);
    expect(garbage.code, garbage.stderr).toBe(0);
    expect(garbage.cache).toEqual(['not a cache file; compiled', `written ${path}`]);
    expect((await sync(home)).cache).toEqual([`used ${path}`]);

    // Bigger than any cache (a sparse file): not read at all.
    await truncate(path, 65 * 1024 * 1024);
    const big = await sync(home);
    expect(big.code, big.stderr).toBe(0);
    expect(big.cache).toEqual(['too big; compiled', `written ${path}`]);
    expect((await stat(path)).size).toBeLessThan(16 * 1024 * 1024);

    // One byte of V8's data changed: the file's checksum no longer matches.
    const damaged = Buffer.from(good);
    const at = damaged.length - 100;
    damaged.writeUInt8(damaged.readUInt8(at) ^ 0xff, at);
    await writeFile(path, damaged, { mode: 0o600 });
    const run = await sync(home);
    expect(run.code, run.stderr).toBe(0);
    expect(run.cache).toEqual(['damaged (checksum); compiled', `written ${path}`]);

    // A whole file with a right checksum whose data V8 does not take (not V8's format): V8 says no.
    const { createHash } = await import('node:crypto');
    const head = good.subarray(0, good.indexOf(0x0a) + 1);
    const body = Buffer.concat([good.subarray(head.length + 32, head.length + 33), Buffer.alloc(4096, 7)]);
    await writeFile(path, Buffer.concat([head, createHash('sha256').update(body).digest(), body]), { mode: 0o600 });
    const refused = await sync(home);
    expect(refused.code, refused.stderr).toBe(0);
    expect(refused.cache).toEqual(['rejected by V8; compiled', `written ${path}`]);
    expect((await sync(home)).cache).toEqual([`used ${path}`]);
  });

  it('a changed bundle never uses the cache of the old one, and the old one is removed', async () => {
    const home = join(tmp.dir, 'cache-c');
    expect((await sync(home)).code).toBe(0);
    const [oldFile] = await cacheFiles(home);
    // Same code plus a comment: another bundle as far as its bytes go.
    await appendFile(script(), '\n// another build\n');
    const run = await sync(home);
    expect(run.code, run.stderr).toBe(0);
    expect(run.cache[0]).toBe('none; compiled');
    const [newFile] = await cacheFiles(home);
    expect(newFile).not.toBe(oldFile);
    expect(await cacheFiles(home)).toEqual([newFile]);
    expect((await sync(home)).cache).toEqual([`used ${join(cacheDir(home), newFile!)}`]);
  });

  it('a cache dir that cannot be made, or that others may write to, leaves the run as it was', async () => {
    // XDG_CACHE_HOME under a plain file: no folder can be made there (as root too).
    const blocker = join(tmp.dir, 'not-a-dir');
    await writeFile(blocker, 'x');
    const blocked = await sync(join(blocker, 'cache'));
    expect(blocked.code, blocked.stderr).toBe(0);
    expect(blocked.cache).toEqual(['unreadable (ENOTDIR); compiled', 'not written: ENOTDIR']);
    expect(blocked.stderr).not.toMatch(/dist\/cli\/main\.js ran/);

    // A cache folder anyone may write to is neither read nor written.
    const home = join(tmp.dir, 'cache-d');
    expect((await sync(home)).code).toBe(0);
    await chmod(cacheDir(home), 0o777);
    const open = await sync(home);
    expect(open.code, open.stderr).toBe(0);
    expect(open.cache[0]).toBe('none; compiled');
    expect(open.cache[1]).toMatch(/^not written: .*others may write to it/);

    const off = await sync(join(tmp.dir, 'cache-e'), { BOXSYNC_CODE_CACHE: 'off' });
    expect(off.code, off.stderr).toBe(0);
    expect(off.cache).toEqual(['off; compiled']);
    await expect(stat(join(tmp.dir, 'cache-e'))).rejects.toThrow(/ENOENT/);
  });
});
