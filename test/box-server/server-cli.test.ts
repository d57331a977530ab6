/**
 * `boxsync server` as a real child process: prints the base URL first, serves the API with the given developer
 * token, exits 0 on SIGTERM and SIGINT; bad arguments exit 2 without starting.
 */
import { once } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { runCli, spawnCli } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';
import { waitFor } from '../support/wait.js';

async function startServer(args: readonly string[]): Promise<{ child: ChildProcess; baseUrl: string; stdout: () => string }> {
  const child = spawnCli(['server', ...args]);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const baseUrl = await waitFor(() => (stdout.includes('\n') ? stdout.split('\n')[0] : null), { timeoutMs: 30_000, what: `the base URL (stderr: ${stderr})` });
  return { child, baseUrl, stdout: () => stdout };
}

async function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<number | null> {
  const exited = once(child, 'exit');
  child.kill(signal);
  const [code] = (await exited) as [number | null];
  return code;
}

describe('boxsync server', () => {
  it('prints the base URL first, answers /2.0/users/me with the given token, and exits 0 on SIGTERM', async () => {
    const { child, baseUrl, stdout } = await startServer(['--port', '0', '--token', 'T']);
    try {
      expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const me = await fetch(`${baseUrl}/2.0/users/me`, { headers: { Authorization: 'Bearer T' } });
      expect(me.status).toBe(200);
      expect(((await me.json()) as { login: string }).login).toBe('user@example.com');
      const anon = await fetch(`${baseUrl}/2.0/users/me`);
      expect(anon.status).toBe(401);
    } finally {
      expect(await stop(child, 'SIGTERM')).toBe(0);
    }
    expect(stdout().split('\n')[0]).toMatch(/^http:\/\//);
  });

  it('seeds sample content, keeps it in --data across restarts, and exits 0 on SIGINT', async () => {
    const tmp = await makeTempDir();
    try {
      const first = await startServer(['--data', tmp.dir, '--sample', '--token', 'S']);
      const list = async (baseUrl: string): Promise<string[]> => {
        const r = await fetch(`${baseUrl}/2.0/folders/0/items`, { headers: { Authorization: 'Bearer S' } });
        return ((await r.json()) as { entries: { name: string }[] }).entries.map((e) => e.name);
      };
      const created = await fetch(`${first.baseUrl}/2.0/folders`, {
        method: 'POST',
        headers: { Authorization: 'Bearer S', 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Kept', parent: { id: '0' } }),
      });
      expect(created.status).toBe(201);
      const before = await list(first.baseUrl);
      expect(before).toEqual(expect.arrayContaining(['Documents', 'Photos', 'README.txt', 'Kept']));
      expect(await stop(first.child, 'SIGINT')).toBe(0);
      const second = await startServer(['--data', tmp.dir, '--sample', '--token', 'S']);
      try {
        expect(await list(second.baseUrl)).toEqual(before);
      } finally {
        expect(await stop(second.child, 'SIGTERM')).toBe(0);
      }
    } finally {
      await tmp.cleanup();
    }
  });

  it('refuses bad arguments with exit code 2 and a usage line', async () => {
    const r = await runCli(['server', '--port', 'abc'], { timeoutMs: 30_000 });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--port must be an integer');
    expect(r.stderr).toContain('usage: boxsync server');
    expect(r.stdout).toBe('');
    const help = await runCli(['server', '--help'], { timeoutMs: 30_000 });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('usage: boxsync server');
    const unknown = await runCli(['server', '--bogus'], { timeoutMs: 30_000 });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown option --bogus');
  });
});
