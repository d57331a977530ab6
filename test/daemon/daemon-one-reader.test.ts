/**
 * Issue 11: Box's change stream has one reader. With the real daemon against box-server: a local edit of a file
 * trashed on Box keeps its Box id (restore + new version), a web link created on Box appears as a .url file
 * within seconds, and one change on Box costs one GET /events. The events of boxsync's own changes cost nothing
 * more: the journal already holds those items as the events show them.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait.js';
import { createHarness, type DaemonRun, type Harness } from './daemon-harness.js';

const BOUND = { timeoutMs: 20_000, intervalMs: 50 };
let h: Harness;
let run: DaemonRun;

beforeAll(async () => {
  h = await createHarness();
  run = await h.start();
  await waitFor(async () => {
    const s = await h.status();
    return s.passes > 0 && s.engine.phase === 'idle';
  }, { ...BOUND, what: 'the first pass' });
});
afterAll(async () => {
  await h.stop(run);
  await h.close();
});

const idle = async (): Promise<void> => {
  await waitFor(async () => (await h.status()).engine.phase === 'idle', { ...BOUND, what: 'idle' });
};

describe('one reader of the event stream (daemon)', () => {
  it('one change on Box costs one GET /events', async () => {
    await idle();
    h.srv.control.clearRequests();
    h.web.uploadFile(h.rootId, 'one.txt', 'one change');
    await waitFor(async () => (await readFile(join(h.mirror, 'one.txt'), 'utf8').catch(() => '')) === 'one change', { ...BOUND, what: 'one.txt' });
    await idle();
    expect(h.srv.control.requests().filter((r) => r.method === 'GET' && r.path === '/2.0/events')).toHaveLength(1);
  });

  it("the events of boxsync's own uploads and folder create are not fetched again; a later change on Box is", async () => {
    await idle();
    h.srv.control.clearRequests();
    await mkdir(join(h.mirror, 'echo-dir'));
    await writeFile(join(h.mirror, 'echo-dir', 'a.txt'), 'a from here');
    await writeFile(join(h.mirror, 'echo-b.txt'), 'b from here');
    const [dir, a, b] = await waitFor(() => {
      const found = ['Mirror/echo-dir', 'Mirror/echo-dir/a.txt', 'Mirror/echo-b.txt'].map((p) => h.web.findByPath(p));
      return found.every((f) => f !== undefined && f !== null) ? found.map((f) => f!.id) : null;
    }, { ...BOUND, what: 'the three items on Box' });
    const lastWrite = Math.max(...h.srv.control.requests().filter((r) => r.method === 'POST').map((r) => r.atMs));
    // The events of those changes reach the daemon (its long poll wakes, a pass reads them), and it goes idle.
    await waitFor(() => h.srv.control.requests().some((r) => r.method === 'GET' && r.path === '/2.0/events' && r.atMs > lastWrite), {
      ...BOUND,
      what: 'a GET /events after the uploads',
    });
    await idle();
    const refetched = h.srv.control.requests().filter((r) => r.method === 'GET' && [`/2.0/folders/${dir}`, `/2.0/files/${a}`, `/2.0/files/${b}`].includes(r.path));
    expect(refetched).toEqual([]);
    h.web.uploadVersion(b!, 'b changed on Box');
    await waitFor(async () => (await readFile(join(h.mirror, 'echo-b.txt'), 'utf8').catch(() => '')) === 'b changed on Box', { ...BOUND, what: 'the change on Box' });
  });

  it('a web link created on Box appears as a .url file within seconds', async () => {
    h.web.createWebLink(h.rootId, 'Handbook', 'https://example.com/handbook');
    await waitFor(async () => (await readFile(join(h.mirror, 'Handbook.url'), 'utf8').catch(() => '')).includes('https://example.com/handbook'), {
      ...BOUND,
      what: 'Handbook.url',
    });
  });

  it('five files edited locally right after they were trashed on Box keep their Box ids and gain a version', async () => {
    const files = Array.from({ length: 5 }, (_, i) => h.web.uploadFile(h.rootId, `keep-${i}.txt`, `v1 ${i}`));
    await waitFor(async () => {
      for (let i = 0; i < 5; i++) if ((await readFile(join(h.mirror, `keep-${i}.txt`), 'utf8').catch(() => '')) !== `v1 ${i}`) return false;
      return true;
    }, { ...BOUND, what: 'five files mirrored' });
    await idle();
    for (let i = 0; i < 5; i++) {
      h.web.trash('file', files[i]!.id);
      await writeFile(join(h.mirror, `keep-${i}.txt`), `v2 ${i} (local edit)`);
    }
    await waitFor(() => files.every((f, i) => {
      const item = h.web.getItem('file', f.id);
      return item?.item_status === 'active' && h.web.readFile(f.id).toString() === `v2 ${i} (local edit)`;
    }), { ...BOUND, what: 'the five files restored with the edit as a new version' });
    const names = h.web.listFolder(h.rootId).filter((e) => e.name.startsWith('keep-'));
    expect(names.map((e) => e.id).sort()).toEqual(files.map((f) => f.id).sort());
  });
});
