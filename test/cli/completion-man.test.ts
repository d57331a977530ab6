/**
 * Shell completion and the manual page (issue 15), generated from the command tree: the bash script completes
 * commands, subcommands and options in a real bash; the zsh one parses in zsh when it is installed; the man page
 * renders with man(1) and lists every command.
 */
import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';

describe('completion and man page', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  beforeAll(async () => (tmp = await makeTempDir('boxsync-compl-')));
  afterAll(async () => tmp.cleanup());

  it('bash: completes commands, subcommands and each command\'s options', async () => {
    const r = await runCli(['completion', 'bash']);
    expect(r.code).toBe(0);
    const script = join(tmp.dir, 'boxsync.bash');
    await writeFile(script, r.stdout);
    const complete = (words: string[]): string[] => {
      const cmd = `source ${script}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _boxsync; printf '%s\\n' "\${COMPREPLY[@]}"`;
      const out = spawnSync('bash', ['-c', cmd], { encoding: 'utf8', cwd: tmp.dir });
      expect(out.status, out.stderr).toBe(0);
      return out.stdout.split('\n').filter(Boolean).sort();
    };
    expect(complete(['boxsync', 'sy'])).toEqual(['sync', 'sync-now']);
    expect(complete(['boxsync', 'service', 'i'])).toEqual(['install']);
    expect(complete(['boxsync', 'sync', '--b'])).toEqual(['--bwlimit']);
    expect(complete(['boxsync', 'status', '--j'])).toEqual(['--json']);
  });

  it('zsh: the script parses (when zsh is installed); an unknown shell is refused', async (ctx) => {
    const bad = await runCli(['completion', 'fish']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/use bash or zsh/);
    const r = await runCli(['completion', 'zsh']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^#compdef boxsync/);
    expect(r.stdout).toMatch(/'sync:Sync every configured folder pair/);
    const zsh = spawnSync('zsh', ['-n', '-c', r.stdout], { encoding: 'utf8' });
    if (zsh.error) {
      ctx.skip();
      return;
    }
    expect(zsh.status, zsh.stderr).toBe(0);
  });

  it('man: renders with man(1) and lists every command with its options', async (ctx) => {
    const r = await runCli(['man']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\.TH BOXSYNC 1 /);
    const page = join(tmp.dir, 'boxsync.1');
    await writeFile(page, r.stdout);
    const man = spawnSync('man', ['-l', page], { encoding: 'utf8', env: { ...process.env, MANWIDTH: '100', MANPAGER: 'cat', PAGER: 'cat' } });
    if (man.error) {
      ctx.skip();
      return;
    }
    expect(man.status, man.stderr).toBe(0);
    for (const c of ['sync', 'daemon', 'status', 'service install', 'completion']) expect(man.stdout).toContain(`boxsync ${c}`);
    expect(man.stdout).toContain('--bwlimit');
    expect(man.stdout).toMatch(/EXIT STATUS/);
  });
});
