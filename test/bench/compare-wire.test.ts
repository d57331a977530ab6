/**
 * The compare bench's columns on Box's wire and under Box's limits rest on compare-wire.ts: its API-call count must
 * count what box-server's `boxLimits` counts (API routes, 429s included; not download or zip content URLs), and its
 * clients must really reach the as-box server through its proxy (boxsync with Box's own URLs; rclone's Box backend).
 */
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startBoxServer, type BoxServer } from '../../src/box-server/index.js';
import { makeTempDir } from '../support/tmp.js';
import { counted, countRequests, isApiCall, measureWireSync, rcloneBoxCopy, startWire, writeRcloneBoxConfig, writeWireConfig } from './compare-wire.js';

const TOKEN = 'WIRE-TEST';
const hasRclone = spawnSync('rclone', ['version'], { stdio: 'ignore' }).status === 0;

describe('compare-wire: API calls and Box\'s wire for the compare bench', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('isApiCall: API routes under /2.0 and /api/2.0, not zip content, download or long-poll URLs', () => {
    expect(isApiCall('/2.0/folders/0/items')).toBe(true);
    expect(isApiCall('/api/2.0/files/content')).toBe(true);
    expect(isApiCall('/2.0/zip_downloads')).toBe(true);
    expect(isApiCall('/2.0/zip_downloads/abc_-=/status')).toBe(true);
    expect(isApiCall('/2.0/zip_downloads/abc_-=/content')).toBe(false);
    expect(isApiCall('/dl/abc')).toBe(false);
    expect(isApiCall('/subscribe')).toBe(false);
    expect(isApiCall('/oauth2/token')).toBe(false);
  });

  it('countRequests counts API calls (429s among them) apart from the download URL, as boxLimits counts them', async () => {
    const srv: BoxServer = await startBoxServer({ port: 0, tokens: [TOKEN], boxLimits: { apiCallsPerMinute: 5 } });
    cleanups.push(() => srv.close());
    const fileId = srv.control.as('1').uploadFile('0', 'a.txt', Buffer.from('alpha')).id;
    const auth = { Authorization: `Bearer ${TOKEN}` };
    const c = countRequests(srv);
    // One download: the API call that answers 302, then its pre-signed URL (not an API call).
    const redirect = await fetch(`${srv.apiUrl}/files/${fileId}/content`, { headers: auth, redirect: 'manual' });
    expect(redirect.status).toBe(302);
    const body = await fetch(redirect.headers.get('location')!);
    expect(await body.text()).toBe('alpha');
    // Six more API calls: four fit in the limit of 5, the last two are answered 429.
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await fetch(`${srv.apiUrl}/users/me`, { headers: auth });
      await r.arrayBuffer();
      statuses.push(r.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    expect(await c.stop()).toEqual({ apiCalls: 7, refused: 2, other: 1, complete: true });
  });

  it("boxsync with Box's own URLs (no remote section) mirrors from the as-box server through its proxy", async () => {
    const wire = await startWire(TOKEN);
    cleanups.push(() => wire.close());
    const tmp = await makeTempDir('compare-wire-');
    cleanups.push(() => tmp.cleanup());
    const web = wire.server.control.as('1');
    const root = web.createFolder('0', 'Bench 3').id;
    const sub = web.createFolder(root, 'dir-0000').id;
    for (let i = 0; i < 3; i++) web.uploadFile(sub, `file-${i}.bin`, Buffer.from(`content ${i}`));
    const configFile = join(tmp.dir, 'config.json');
    const mirror = join(tmp.dir, 'mirror');
    await writeWireConfig(configFile, { box: wire, token: TOKEN, remoteId: root, localPath: mirror, stateDir: join(tmp.dir, 'state'), socketPath: join(tmp.dir, 'control.sock') });
    const config = JSON.parse(await readFile(configFile, 'utf8')) as Record<string, unknown>;
    expect(config.remote, "no remote section: boxsync's defaults are Box's own URLs").toBeUndefined();
    const { m, calls } = await counted(wire.server, () => measureWireSync(wire, configFile));
    expect(m.code, m.summary).toBe(0);
    for (let i = 0; i < 3; i++) expect(await readFile(join(mirror, 'dir-0000', `file-${i}.bin`), 'utf8')).toBe(`content ${i}`);
    // Everything it did reached the as-box server (nothing else could answer Box's host names).
    expect(calls.apiCalls).toBeGreaterThan(0);
    expect(calls.refused).toBe(0);
    expect(m.peakRssKiB).toBeGreaterThan(0);

    if (!hasRclone) {
      process.stderr.write('compare-wire.test.ts: rclone is not installed (apt-get install rclone): its Box backend is not checked\n');
      return;
    }
    const rcloneConfig = join(tmp.dir, 'rclone.conf');
    await writeRcloneBoxConfig(rcloneConfig, TOKEN);
    const dest = join(tmp.dir, 'rclone-box');
    const r = await counted(wire.server, () => rcloneBoxCopy(wire, 'Bench 3', dest, rcloneConfig));
    expect(r.m.code, r.m.summary).toBe(0);
    for (let i = 0; i < 3; i++) expect(await readFile(join(dest, 'dir-0000', `file-${i}.bin`), 'utf8')).toBe(`content ${i}`);
    // rclone's Box backend makes an API call per file (the 302) and fetches each download URL.
    expect(r.calls.apiCalls).toBeGreaterThanOrEqual(3);
    expect(r.calls.other).toBe(3);
  });
});
