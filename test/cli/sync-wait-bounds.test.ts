/**
 * Issue 26, point 11: a download's deadline (`http.downloadDeadlineSec` plus its size at
 * `http.downloadMinRateKiBps`) covers the waits before its bytes too. A file Box keeps answering 202 (not ready)
 * with a short Retry-After used to be asked 31 times, each wait up to `http.maxRetryAfterSec` (300 s): up to
 * 2.5 hours for one file. Now the download ends at its deadline, and the rest of the run syncs.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../support/closed-after-each.js';
import { explain, listTree, startSyncEnv, writeText } from './sync-harness.js';

const syncEnv = closedAfterEach(startSyncEnv);

describe('sync --once: a download that is never ready ends at its deadline', () => {
  it('202 answers with a short Retry-After stop at the download deadline, not after 30 of them; the rest syncs', async () => {
    const e = await syncEnv();
    await e.writeConfig({ extra: { http: { downloadDeadlineSec: 3 } } });
    const slow = e.web.uploadFile(e.remoteRootId, 'later.bin', 'not ready');
    e.web.uploadFile(e.remoteRootId, 'now.txt', 'ready');
    await writeText(join(e.mirror, 'local.txt'), 'made here');
    const content = `/2.0/files/${slow.id}/content`;
    e.srv.control.failNext({ method: 'GET', path: content, count: 1000, status: 202, retryAfterSec: 1, body: {} });
    const r = await e.sync([], { timeoutMs: 60_000 });
    expect(r.code, explain(r)).toBe(1);
    expect(r.stdout + r.stderr).toMatch(/later\.bin[\s\S]*still not ready for download \(202\) by its deadline/);
    // A deadline of 3 s at one answer a second: a handful of requests, not the 31 that 30 waits allowed.
    const asked = e.srv.control.requests().filter((q) => q.method === 'GET' && q.path === content).length;
    expect(asked).toBeGreaterThanOrEqual(2);
    expect(asked).toBeLessThanOrEqual(5);
    expect(await listTree(e.mirror)).toEqual(['local.txt', 'now.txt']);
    expect(e.web.findByPath('/Mirror/local.txt')).not.toBeNull();
  });
});
