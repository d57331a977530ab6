/**
 * Issue 26 in daemon mode (real process, real box-server): a local name that is not UTF-8 is parked and listed by
 * `boxsync status` (escaped), and `boxsync retry` goes through the control socket: the daemon tries the item again
 * at once (it is still not UTF-8, so the rescan of its folder parks it again; nothing is dropped in silence).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sendControl } from '../../src/daemon/control-client.js';
import { runCli } from '../support/cli.js';
import { waitFor } from '../support/wait.js';
import { createHarness, type DaemonRun, type Harness } from './daemon-harness.js';

const BOUND = { timeoutMs: 30_000, intervalMs: 100 };
let h: Harness | undefined;
let run: DaemonRun | undefined;
afterEach(async () => {
  if (run && h) await h.stop(run).catch(() => undefined);
  run = undefined;
  await h?.close();
  h = undefined;
});

describe('parked items in the daemon', () => {
  it('a name that is not UTF-8 is listed by status, escaped; boxsync retry asks the daemon, which parks it again', async () => {
    h = await createHarness();
    run = await h.start();
    const x = h;
    await writeFile(Buffer.concat([Buffer.from(`${x.mirror}/`), Buffer.from([0x62, 0xff, 0xfe])]), 'bytes');
    await writeFile(join(x.mirror, 'ok.txt'), 'ok');
    await sendControl(x.socketPath, { verb: 'sync-now' });
    const parked = await waitFor(
      async () => {
        const s = await x.status();
        const e = s.engine.errors.find((f) => f.code === 'local_name_not_utf8');
        return e && x.web.listFolder(x.rootId).some((i) => i.name === 'ok.txt') ? e : null;
      },
      { ...BOUND, what: 'the name to be parked and ok.txt uploaded' },
    );
    expect(parked).toMatchObject({ path: 'b\\xff\\xfe', nextRetryAtMs: null });
    const text = await runCli(['status', '--config', x.configFile]);
    expect(text.stdout).toContain('b\\xff\\xfe: this name is not valid UTF-8');
    expect(text.code).toBe(1);

    const passes = (await x.status()).passes;
    const retried = await runCli(['retry', '--config', x.configFile]);
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stdout).toMatch(/^1 item to try again now/);
    expect(retried.stdout).toContain('  b\\xff\\xfe (local_name_not_utf8)');
    // Tried again by a pass of its own (a full one: the name's folder is the root), and parked again.
    await waitFor(
      async () => {
        const s = await x.status();
        return s.passes > passes && s.engine.phase === 'idle' && s.engine.errors.some((f) => f.path === 'b\\xff\\xfe') ? s : null;
      },
      { ...BOUND, what: 'the retry pass to park the name again' },
    );
    expect(x.web.listFolder(x.rootId).map((i) => i.name)).toEqual(['ok.txt']);
  });
});
