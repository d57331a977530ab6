/**
 * A 25 MB file goes up through a Box upload session (parts, then commit), and comes down intact on a fresh
 * mirror.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { explain, startSyncEnv, type SyncEnv } from './sync-harness.js';

const SIZE = 25 * 1024 * 1024;
let e: SyncEnv & { remoteRootId: string };
beforeAll(async () => {
  e = await startSyncEnv();
});
afterAll(async () => {
  await e.close();
});

describe('a 25 MB file', () => {
  it('is uploaded through an upload session and verified by SHA-1', async () => {
    const content = randomBytes(SIZE);
    const sha1 = createHash('sha1').update(content).digest('hex');
    await mkdir(e.mirror, { recursive: true });
    await writeFile(join(e.mirror, 'big.bin'), content);
    e.srv.control.clearRequests();

    const r = await e.sync([], { timeoutMs: 180_000 });
    expect(r.code, explain(r)).toBe(0);
    const reqs = e.srv.control.requests();
    expect(reqs.filter((q) => q.method === 'POST' && /\/upload_sessions$/.test(q.path))).toHaveLength(1);
    expect(reqs.filter((q) => q.method === 'PUT' && /\/upload_sessions\/[^/]+$/.test(q.path)).length).toBeGreaterThanOrEqual(3);
    expect(reqs.filter((q) => q.method === 'POST' && /\/upload_sessions\/[^/]+\/commit$/.test(q.path)).length).toBeGreaterThanOrEqual(1);
    expect(reqs.filter((q) => q.method === 'POST' && /\/files\/content$/.test(q.path))).toEqual([]);

    const item = e.web.findByPath('/Mirror/big.bin');
    expect(item?.type).toBe('file');
    expect(e.web.getItem('file', item!.id)?.sha1).toBe(sha1);

    // Down again into a second, empty mirror.
    const second = join(e.dir, 'mirror2');
    await e.writeConfig({ folder: { localPath: second }, extra: { stateDir: join(e.dir, 'state2') } });
    const down = await e.sync([], { timeoutMs: 180_000 });
    expect(down.code, explain(down)).toBe(0);
    expect(createHash('sha1').update(await readFile(join(second, 'big.bin'))).digest('hex')).toBe(sha1);
  }, 240_000);
});
