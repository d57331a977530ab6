/**
 * Names through `sync --once`. Box names are unique case-insensitively and Box refuses some names:
 * - two local names that differ only in case, or only in Unicode normalisation, never clobber each other: one
 *   syncs, the other is reported, and both stay on disk untouched;
 * - names Box refuses are reported and skipped, and not retried on the next run.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { escapeText } from '../../src/core/escape.js';
import { contentRequests, explain, readText, startSyncEnv, writeText, type SyncEnv } from './sync-harness.js';

let e: SyncEnv & { remoteRootId: string };
beforeAll(async () => {
  e = await startSyncEnv();
});
afterAll(async () => {
  await e.close();
});

const nfc = 'caf\u00e9.txt';
const nfd = 'cafe\u0301.txt';

describe('name clashes', () => {
  it('a case clash: one syncs, the other is reported, both stay on disk', async () => {
    await writeText(join(e.mirror, 'Clash', 'Report.txt'), 'upper\n');
    await writeText(join(e.mirror, 'Clash', 'report.txt'), 'lower\n');
    const r = await e.sync();
    expect([0, 1], explain(r)).toContain(r.code);
    expect(r.stderr).toMatch(/case/i);
    const box = e.web.listFolder(e.web.findByPath('/Mirror/Clash')!.id);
    expect(box).toHaveLength(1);
    const winner = box[0]!;
    expect(['Report.txt', 'report.txt']).toContain(winner.name);
    expect(e.web.readFile(winner.id).toString()).toBe(winner.name === 'Report.txt' ? 'upper\n' : 'lower\n');
    expect(await readText(join(e.mirror, 'Clash', 'Report.txt'))).toBe('upper\n');
    expect(await readText(join(e.mirror, 'Clash', 'report.txt'))).toBe('lower\n');
  });

  it('an NFC/NFD pair: one syncs, the other is reported, both stay on disk', async () => {
    await writeText(join(e.mirror, 'Uni', nfc), 'composed\n');
    await writeText(join(e.mirror, 'Uni', nfd), 'decomposed\n');
    const r = await e.sync();
    expect([0, 1], explain(r)).toContain(r.code);
    expect(r.stderr).toMatch(/unicode|normali[sz]/i);
    const box = e.web.listFolder(e.web.findByPath('/Mirror/Uni')!.id);
    expect(box).toHaveLength(1);
    expect(box[0]!.name.normalize('NFC')).toBe(nfc);
    const local = await readdir(join(e.mirror, 'Uni'));
    expect(local.sort()).toEqual([nfc, nfd].sort());
    expect(await readText(join(e.mirror, 'Uni', nfc))).toBe('composed\n');
    expect(await readText(join(e.mirror, 'Uni', nfd))).toBe('decomposed\n');
  });
});

describe('names Box refuses', () => {
  // (A name over Box's 255 characters cannot exist here: Linux caps names at 255 bytes.)
  const bad = ['trailing space ', 'back\\slash.txt', 'control\tchar.txt'];

  it('are reported and skipped, the rest syncs, and the next run does not retry them', async () => {
    for (const n of bad) await writeText(join(e.mirror, 'Bad', n), 'refused\n');
    await writeText(join(e.mirror, 'Bad', 'fine.txt'), 'fine\n');
    const first = await e.sync();
    expect([0, 1], explain(first)).toContain(first.code);
    const names = e.web.listFolder(e.web.findByPath('/Mirror/Bad')!.id).map((i) => i.name);
    expect(names).toEqual(['fine.txt']);
    // Reported under the name as printed: escaped (a tab shows as \x09, a backslash doubled).
    for (const n of bad) expect(first.stderr, `report for ${JSON.stringify(n.slice(0, 20))}`).toContain(escapeText(n.slice(0, 20)));

    e.srv.control.clearRequests();
    const second = await e.sync();
    expect([0, 1], explain(second)).toContain(second.code);
    expect(contentRequests(e.srv).uploads).toEqual([]);
    for (const n of bad) expect(await readText(join(e.mirror, 'Bad', n))).toBe('refused\n');
  });
});
