import { chmod, mkdir, stat, writeFile } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DaemonNotRunningError, sendControl } from '../../src/daemon/control/control-client.js';
import type { ControlRequest } from '../../src/daemon/control/control-protocol.js';
import { startControlServer, type ControlServer } from '../../src/daemon/control/control-server.js';
import { makeTempDir } from '../support/tmp.js';

describe('control socket', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let server: ControlServer | null = null;
  const seen: ControlRequest[] = [];

  const handler = async (req: ControlRequest): Promise<unknown> => {
    seen.push(req);
    if (req.verb === 'confirm-guard') throw new Error(`no safety guard with id ${req.id} is held`);
    return { echoed: req.verb };
  };

  beforeEach(async () => {
    ({ dir, cleanup } = await makeTempDir('boxsync-sock-'));
    seen.length = 0;
  });

  afterEach(async () => {
    await server?.close();
    server = null;
    await cleanup();
  });

  it('creates the directory 0700 and the socket 0600', async () => {
    const socketPath = join(dir, 'run', 'boxsync', 'control.sock');
    server = await startControlServer(socketPath, handler);
    expect((await stat(join(dir, 'run', 'boxsync'))).mode & 0o777).toBe(0o700);
    const st = await stat(socketPath);
    expect(st.isSocket()).toBe(true);
    expect(st.mode & 0o777).toBe(0o600);
  });

  it('never changes the mode of a directory it did not create, and refuses one that others can write', async () => {
    // A private directory of the user's own (e.g. a home folder at 0750): used as it is, its mode untouched.
    const mine = join(dir, 'home');
    await mkdir(mine);
    await chmod(mine, 0o750);
    server = await startControlServer(join(mine, 'c.sock'), handler);
    expect((await stat(mine)).mode & 0o777).toBe(0o750);
    await server.close();
    server = null;
    // A directory others can write (like /tmp): refused with a clear message, and left as it was.
    const shared = join(dir, 'shared');
    await mkdir(shared);
    await chmod(shared, 0o1777);
    await expect(startControlServer(join(shared, 'c.sock'), handler)).rejects.toThrow(/can be written by other users \(mode 1777\).*did not change the directory/);
    expect((await stat(shared)).mode & 0o7777).toBe(0o1777);
    const groupWritable = join(dir, 'group');
    await mkdir(groupWritable);
    await chmod(groupWritable, 0o770);
    await expect(startControlServer(join(groupWritable, 'c.sock'), handler)).rejects.toThrow(/can be written by other users \(mode 770\)/);
    expect((await stat(groupWritable)).mode & 0o777).toBe(0o770);
  });

  it('answers each verb and passes validated requests to the handler', async () => {
    const socketPath = join(dir, 'c.sock');
    server = await startControlServer(socketPath, handler);
    expect(await sendControl(socketPath, { verb: 'status' })).toEqual({ echoed: 'status' });
    expect(await sendControl(socketPath, { verb: 'status-path', path: '/x/y' })).toEqual({ echoed: 'status-path' });
    expect(await sendControl(socketPath, { verb: 'pause' })).toEqual({ echoed: 'pause' });
    await expect(sendControl(socketPath, { verb: 'confirm-guard', id: 'g1' })).rejects.toThrow(/no safety guard with id g1/);
    expect(seen.map((r) => r.verb)).toEqual(['status', 'status-path', 'pause', 'confirm-guard']);
  });

  it('answers several newline-delimited requests on one connection in order, and rejects bad lines clearly', async () => {
    const socketPath = join(dir, 'c.sock');
    server = await startControlServer(socketPath, handler);
    const lines = await new Promise<string[]>((resolve, reject) => {
      const c = createConnection(socketPath);
      let buf = '';
      c.setEncoding('utf8');
      c.on('data', (d: string) => {
        buf += d;
        const got = buf.split('\n').filter(Boolean);
        if (got.length === 4) {
          c.end();
          resolve(got);
        }
      });
      c.on('error', reject);
      c.write('{"verb":"resume"}\nnot json\n{"verb":"explode"}\n{"verb":"sync-now"}\n');
    });
    const parsed = lines.map((l) => JSON.parse(l) as { ok: boolean; error?: string; result?: unknown });
    expect(parsed[0]).toEqual({ ok: true, result: { echoed: 'resume' } });
    expect(parsed[1]!.ok).toBe(false);
    expect(parsed[1]!.error).toMatch(/not valid JSON/);
    expect(parsed[2]!.ok).toBe(false);
    expect(parsed[2]!.error).toMatch(/verbs are status/);
    expect(parsed[3]).toEqual({ ok: true, result: { echoed: 'sync-now' } });
  });

  it('replaces a stale socket left by a crash', async () => {
    const socketPath = join(dir, 'stale.sock');
    // A process that listened and was killed with SIGKILL leaves its socket file behind.
    const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(socketPath)}, () => console.log('up'))`], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((r) => child.stdout!.once('data', () => r()));
    child.kill('SIGKILL');
    await new Promise<void>((r) => child.once('exit', () => r()));
    expect((await stat(socketPath)).isSocket()).toBe(true);
    server = await startControlServer(socketPath, handler);
    expect(await sendControl(socketPath, { verb: 'status' })).toEqual({ echoed: 'status' });
  });

  it('refuses to start a second server on a live socket, and refuses a path that is not a socket', async () => {
    const socketPath = join(dir, 'live.sock');
    server = await startControlServer(socketPath, handler);
    await expect(startControlServer(socketPath, handler)).rejects.toThrow(/another boxsync daemon is answering/);
    const plain = join(dir, 'plain');
    await writeFile(plain, 'x');
    await expect(startControlServer(plain, handler)).rejects.toThrow(/exists and is not a socket; nothing was changed/);
  });

  it('tells the client clearly when no daemon runs', async () => {
    const err = await sendControl(join(dir, 'nobody.sock'), { verb: 'status' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DaemonNotRunningError);
    expect(String((err as Error).message)).toMatch(/no boxsync daemon is running/);
  });

  it('removes the socket on close', async () => {
    const socketPath = join(dir, 'c.sock');
    const s = await startControlServer(socketPath, handler);
    await s.close();
    await expect(stat(socketPath)).rejects.toThrow(/ENOENT/);
  });
});
