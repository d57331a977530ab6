/**
 * The loop guard (issue 29 point 8): a pass's own Box writes come back as events, and the daemon's long poll
 * hears them, but they never wake another pass. The real daemon process against box-server: a local create, an
 * edit, a rename and a new (empty) folder each take exactly one pass, and the daemon is then quiet: its long poll
 * has listened past the end of the event stream (box-server's request log) and no further pass started. A change
 * made on Box still wakes one pass. No sleep: each wait is on a condition, with a bound.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DaemonStatus } from '../../src/daemon/control/control-protocol.js';
import { waitFor } from '../support/wait.js';
import { createHarness, type DaemonRun, type Harness } from './daemon-harness.js';

describe('boxsync daemon: its own writes wake no pass', () => {
  let h: Harness;
  let run: DaemonRun | null = null;

  beforeAll(async () => {
    h = await createHarness();
    h.web.uploadFile(h.rootId, 'from-box.txt', 'on Box before the start');
    await writeFile(join(h.mirror, 'from-here.txt'), 'here before the start');
  });

  afterAll(async () => {
    if (run) expect((await h.stop(run)).code).toBe(0);
    await h?.close();
  });

  /**
   * The position of the last event the daemon's stream shows (read one event a page, as far as it goes): a long
   * poll from there has heard everything. Later events that stream does not show (downloads) wake no long poll.
   */
  async function streamHead(): Promise<number> {
    const stream = (await h.status()).remoteStream.effective;
    let position = '0';
    for (let page = 0; page < 1_000; page++) {
      const res = await fetch(`${h.srv.apiUrl}/events?stream_type=${stream}&stream_position=${position}&limit=1`, { headers: { Authorization: 'Bearer T' } });
      const body = (await res.json()) as { next_stream_position: string | number; entries: unknown[] };
      if (body.entries.length === 0) return Number(position);
      position = String(body.next_stream_position);
    }
    throw new Error('the event stream did not end within 1,000 pages');
  }

  /**
   * Every event so far has been heard: a long poll from the end of the stream (or later) has completed, and the
   * daemon is idle and listening. Its pass count then.
   */
  async function quiet(): Promise<DaemonStatus> {
    const head = await streamHead();
    await waitFor(
      () => h.srv.control.requests().some((r) => r.path === '/subscribe' && Number(new URLSearchParams(r.query).get('stream_position')) >= head),
      { timeoutMs: 60_000, intervalMs: 50, what: `a long poll from stream position ${head} or later` },
    );
    return waitFor(
      async () => {
        const s = await h.status();
        return s.engine.phase === 'idle' && s.remoteStream.state === 'listening' ? s : null;
      },
      { timeoutMs: 60_000, what: 'the daemon idle and listening' },
    );
  }

  /** `change` reaches the other side (`arrived`) in exactly one pass, and nothing wakes another. */
  async function onePass(what: string, change: () => Promise<void>, arrived: () => boolean | Promise<boolean>): Promise<void> {
    const before = (await quiet()).passes;
    await change();
    await waitFor(arrived, { timeoutMs: 60_000, intervalMs: 50, what });
    const after = await quiet();
    expect(after.passes, `${what}: passes after the change (the pass's own Box writes must wake none)`).toBe(before + 1);
    expect(after.engine.errors).toEqual([]);
  }

  it('a local create, edit, rename and new folder each take one pass; a Box change one', async () => {
    run = await h.start();
    try {
      const onBox = (path: string): string | null => {
        const f = h.web.findByPath(`Mirror/${path}`);
        return f === null || f.type !== 'file' ? null : h.web.readFile(f.id).toString();
      };
      // Each local file is written beside the mirror and renamed in: one watcher event, one pass.
      const put = async (name: string, content: string): Promise<void> => {
        await writeFile(join(h.dir, 'staged'), content);
        await rename(join(h.dir, 'staged'), join(h.mirror, name));
      };
      await onePass('a new local file on Box', () => put('new.txt', 'created here'), () => onBox('new.txt') === 'created here');
      await onePass('a local edit on Box', () => put('new.txt', 'edited here'), () => onBox('new.txt') === 'edited here');
      await onePass('a local rename on Box', () => rename(join(h.mirror, 'new.txt'), join(h.mirror, 'renamed.txt')), () => onBox('renamed.txt') === 'edited here' && onBox('new.txt') === null);
      // An empty one: a folder with content can be hinted twice (the folder, then what the watch added on it sees).
      await onePass('a new local folder on Box', () => mkdir(join(h.mirror, 'dir')), () => h.web.findByPath('Mirror/dir')?.type === 'folder');
      // News from Box that is not ours still wakes a pass (only one: the download is a local write, not a Box one).
      await onePass(
        'a new Box file here',
        async () => void h.web.uploadFile(h.rootId, 'box-new.txt', 'created on Box'),
        () => readFile(join(h.mirror, 'box-new.txt'), 'utf8').then((t) => t === 'created on Box', () => false),
      );
    } catch (e) {
      throw new Error(`${String(e)}\n--- daemon output ---\n${run.output().slice(-8000)}`);
    }
  }, 300_000);
});
