/**
 * Issue 26 in daemon mode (real process, real box-server): a local name that is not UTF-8 is parked and listed by
 * `boxsync status` (escaped), and `boxsync retry` goes through the control socket: the daemon tries the item again
 * at once (it is still not UTF-8, so the rescan of its folder parks it again; nothing is dropped in silence).
 */
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../support/closed-after-each.js';
import { sendControl } from '../../src/daemon/control/control-client.js';
import { runCli } from '../support/cli.js';
import { giveTo, unprivilegedUser } from '../support/run-as.js';
import { waitFor } from '../support/wait.js';
import { createHarness } from './daemon-harness.js';

const BOUND = { timeoutMs: 30_000, intervalMs: 100 };
const harness = closedAfterEach(createHarness);

describe('parked items in the daemon', () => {
  it('a name that is not UTF-8 is listed by status, escaped; boxsync retry asks the daemon, which parks it again', async () => {
    const x = await harness();
    await x.start();
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

  const user = unprivilegedUser();
  it.skipIf(!('as' in user))('a download parked in a read-only folder comes down once the folder is writable again, at the next pass', async () => {
    const as = 'as' in user ? user.as : undefined;
    const x = await harness();
    const docs = x.web.createFolder(x.rootId, 'docs');
    x.web.uploadFile(docs.id, 'b.txt', 'b');
    giveTo(x.dir, as!);
    await x.start({}, [], as);
    await waitFor(async () => (await readFile(join(x.mirror, 'docs', 'b.txt'), 'utf8').catch(() => '')) === 'b', { ...BOUND, what: 'the first mirror' });
    await chmod(join(x.mirror, 'docs'), 0o555);
    x.web.uploadFile(docs.id, 'c.txt', 'c from box');
    await waitFor(
      async () => (await x.status()).engine.errors.find((f) => f.path === 'docs/c.txt' && f.code === 'permission_denied') ?? null,
      { ...BOUND, what: 'the download to be parked' },
    );
    await chmod(join(x.mirror, 'docs'), 0o755);
    // Any pass re-checks the park against its probe (the folder's mode changed): a local edit elsewhere brings one.
    await writeFile(join(x.mirror, 'elsewhere.txt'), 'e');
    await waitFor(async () => (await readFile(join(x.mirror, 'docs', 'c.txt'), 'utf8').catch(() => '')) === 'c from box', { ...BOUND, what: 'the parked download to come down' });
    await waitFor(async () => ((await x.status()).engine.errors.length === 0 ? true : null), { ...BOUND, what: 'the park to be gone' });
  });
});
