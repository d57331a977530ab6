import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BoxServer } from '../../../src/box-server/index.js';
import { asRemoteId } from '../../../src/core/model.js';
import { makeTempDir } from '../../support/tmp.js';
import { waitFor } from '../../support/wait.js';
import { FileSessionStore } from './file-session-store.js';
import { adapterFor, startServer } from './harness.js';
import { uploadSource } from '../../support/upload-source.js';

const PART = 1024 * 1024;
const SIZE = 20_000_000 + 777;
const TOTAL_PARTS = Math.ceil(SIZE / PART);
const child = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'upload-child.ts');
const partPut = /^\/api\/2\.0\/files\/upload_sessions\/[^/]+$/;

describe('Box adapter: an upload session survives kill -9', () => {
  let server: BoxServer;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  beforeAll(async () => {
    server = await startServer({ chunkedPartSizeBytes: PART });
    tmp = await makeTempDir('boxsync-kill-');
  });
  afterAll(async () => {
    await server.close();
    await tmp.cleanup();
  });

  it('a new process resumes the session and sends only the parts the server lacks', async () => {
    const body = randomBytes(SIZE);
    const src = join(tmp.dir, 'big.bin');
    await writeFile(src, body);
    const sessionsFile = join(tmp.dir, 'sessions.json');
    const parent = server.control.as('1').createFolder('0', 'killed').id;
    // Slow every part down so the kill lands halfway.
    server.control.failNext({ method: 'PUT', path: partPut, delayMs: 150, count: 1000 });
    const proc = spawn(process.execPath, ['--import', 'tsx', child, server.apiUrl, server.uploadUrl, server.tokenUrl, src, sessionsFile, parent], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    proc.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<NodeJS.Signals | null>((r) => proc.on('exit', (_c, sig) => r(sig)));
    const store = new FileSessionStore(sessionsFile);
    await waitFor(() => (store.get('root:killed.bin')?.parts.length ?? 0) >= 5, { timeoutMs: 30_000, what: `5 recorded parts (child stderr: ${stderr})` });
    proc.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    server.control.clearFaults();
    const rec = store.get('root:killed.bin')!;
    expect(rec.parts.length).toBeLessThan(TOTAL_PARTS);

    const resumedAtMs = Date.now();
    const adapter = adapterFor(server, { uploadSessions: store });
    const e = await adapter.store.uploadNew({ parentId: asRemoteId(parent), name: 'killed.bin', source: await uploadSource(src), modifiedAtMs: 1_700_000_000_000, resumeKey: 'root:killed.bin' });
    expect(e).toMatchObject({ sizeBytes: SIZE, sha1: createHash('sha1').update(body).digest('hex') });
    const reqs = server.control.requests();
    const offset = (r: { headers: Record<string, string> }): number => Number(/^bytes (\d+)-/.exec(r.headers['content-range']!)![1]);
    const isPart = (r: { method: string; path: string }): boolean => r.method === 'PUT' && partPut.test(r.path);
    // The child's requests started before the resume (some finished after the kill); the new process's after.
    const storedByChild = new Set(reqs.filter((r) => isPart(r) && r.atMs < resumedAtMs && r.status === 200).map(offset));
    const resent = reqs.filter((r) => isPart(r) && r.atMs >= resumedAtMs);
    expect(reqs.filter((r) => r.atMs >= resumedAtMs && r.method === 'POST' && r.path.endsWith('/upload_sessions'))).toHaveLength(0);
    expect(reqs.some((r) => r.atMs >= resumedAtMs && r.method === 'GET' && r.path.endsWith('/parts'))).toBe(true);
    // The part in flight at the kill may finish on the server after the new process listed the parts; that
    // one part can be sent twice. Every other part the server held is never sent again.
    const twice = resent.filter((r) => storedByChild.has(offset(r)));
    expect(twice.length).toBeLessThanOrEqual(1);
    expect(resent.length - twice.length).toBe(TOTAL_PARTS - storedByChild.size);
    expect(resent.length).toBeLessThanOrEqual(TOTAL_PARTS - rec.parts.length);
    expect(store.list()).toEqual([]);
  });
});
