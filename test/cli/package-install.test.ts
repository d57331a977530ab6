/**
 * Installing like a real tool (issue 15): `npm pack` builds dist/ (prepack) and ships only what users need; the
 * tarball installed with `npm install -g --prefix P` gives a `boxsync` on PATH that runs the compiled code with
 * no TypeScript loader, and `--version`, `--help` and `demo` work from there.
 *
 * One shortcut, for CI time only: the install skips install scripts and takes better-sqlite3's native module
 * from this checkout's own build (the same Node, the same machine) instead of compiling it again (~60-90 s
 * here; its prebuilt download cannot be reached). Everything else comes from npm as for a user.
 */
import { spawnSync } from 'node:child_process';
import { cp, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(cmd: string, args: readonly string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(cmd, args, { cwd: opts.cwd ?? repoRoot, env: { ...process.env, ...opts.env }, encoding: 'utf8', timeout: opts.timeoutMs ?? 240_000 });
  return { code: r.status, stdout: r.stdout ?? '', stderr: `${r.stderr ?? ''}${r.error ? String(r.error) : ''}` };
}

describe('the packed package, installed from its tarball', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let prefix: string;
  let files: string[];
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    tmp = await makeTempDir('boxsync-pack-');
    const packed = run(npm, ['pack', '--json', '--pack-destination', tmp.dir], { env: { npm_config_loglevel: 'error' } });
    expect(packed.code, packed.stderr).toBe(0);
    const info = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
    files = info[0]!.files.map((f) => f.path);
    prefix = join(tmp.dir, 'prefix');
    const installed = run(npm, ['install', '-g', '--prefix', prefix, '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund', join(tmp.dir, info[0]!.filename)]);
    expect(installed.code, installed.stderr).toBe(0);
    const pkg = join(prefix, 'lib', 'node_modules', 'boxsync');
    await cp(join(repoRoot, 'node_modules', 'better-sqlite3', 'build'), join(pkg, 'node_modules', 'better-sqlite3', 'build'), { recursive: true });
    // XDG_CACHE_HOME: `sync`'s code cache (bin/code-cache.js) in the temp dir, not in this user's home.
    env = { PATH: `${join(prefix, 'bin')}:${process.env.PATH ?? ''}`, BOXSYNC_FROM_SOURCE: '', XDG_CACHE_HOME: join(tmp.dir, 'cache') };
  }, 600_000);
  afterAll(async () => tmp?.cleanup());

  it('ships the build, the docs, the unit and the licence, and no tests, CI or TypeScript sources', () => {
    expect(files).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'bin/boxsync.js', 'dist/cli/main.js', 'dist/cli-script/main.cjs', 'bin/code-cache.js', 'dist/box-server/index.js', 'systemd/boxsync.service', 'config/config.example.json', 'package.json', 'dist/boxsync.1', 'dist/ui/app.js', 'dist/ui/app.css']));
    expect(files.filter((f) => /^(test|\.ci|src|bench)\//.test(f) || f.endsWith('.ts'))).toEqual([]);
  });

  it('installs with no TypeScript loader at run time', async () => {
    const deps = await readdir(join(prefix, 'lib', 'node_modules', 'boxsync', 'node_modules'));
    expect(deps).toContain('better-sqlite3');
    expect(deps).not.toContain('tsx');
    expect(deps).not.toContain('typescript');
  });

  it('boxsync --version and --help work from PATH', () => {
    const which = run('sh', ['-c', 'command -v boxsync'], { env, cwd: tmp.dir });
    expect(which.stdout.trim()).toBe(join(prefix, 'bin', 'boxsync'));
    const v = run('boxsync', ['--version'], { env, cwd: tmp.dir });
    expect(v.code, v.stderr).toBe(0);
    const version = (JSON.parse(run('node', ['-p', 'JSON.stringify(require("./package.json"))']).stdout) as { version: string }).version;
    expect(v.stdout.trim()).toBe(`boxsync ${version} (Node ${process.version}, ${process.platform}-${process.arch})`);
    const help = run('boxsync', ['--help'], { env, cwd: tmp.dir });
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/Usage: boxsync/);
    expect(help.stdout).toMatch(/\bdaemon\b/);
    expect(help.stdout).toMatch(/\bstatus\b/);
    // `sync` runs the bundle (bin/boxsync.js, bin/code-cache.js), with pino and better-sqlite3 from the installed package.
    const syncHelp = run('boxsync', ['sync', '--help'], { env, cwd: tmp.dir });
    expect(syncHelp.code, syncHelp.stderr).toBe(0);
    expect(syncHelp.stdout).toMatch(/Usage: boxsync sync/);
  });

  it('boxsync demo runs from PATH and exits 0', () => {
    const demoDir = join(tmp.dir, 'demo');
    const r = run('boxsync', ['demo', '--dir', demoDir], { env, cwd: tmp.dir, timeoutMs: 180_000 });
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toMatch(/Round 1[\s\S]*boxsync: converged[\s\S]*Round 2[\s\S]*boxsync: converged/);
  });
});
