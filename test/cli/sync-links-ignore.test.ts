/**
 * Web links, ignore rules and symlinks through `sync --once`:
 * - a Box web link appears as `NAME.url` (Internet-shortcut format), is never uploaded, and follows a target change;
 * - built-in ignore rules and the root's `exclude` patterns keep files off Box;
 * - a symlink out of the root is reported and skipped, never followed.
 */
import { symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentRequests, explain, readText, startSyncEnv, writeText, type SyncEnv } from './sync-harness.js';

let e: SyncEnv & { remoteRootId: string };
let linkId: string;
beforeAll(async () => {
  e = await startSyncEnv();
  await e.writeConfig({ folder: { exclude: ['*.iso', 'build/'] } });
  linkId = e.web.createWebLink(e.remoteRootId, 'Docs site', 'https://example.com/docs').id;
});
afterAll(async () => {
  await e.close();
});

describe('web links', () => {
  it('become NAME.url files, are never uploaded, and follow target changes', async () => {
    const r = await e.sync();
    expect(r.code, explain(r)).toBe(0);
    expect(await readText(join(e.mirror, 'Docs site.url'))).toMatch(/^\[InternetShortcut\]\r?\nURL=https:\/\/example\.com\/docs\r?\n/);
    expect(e.web.listFolder(e.remoteRootId).map((i) => i.name)).toEqual(['Docs site']);

    e.web.updateWebLink(linkId, 'https://example.com/v2');
    e.srv.control.clearRequests();
    const again = await e.sync();
    expect(again.code, explain(again)).toBe(0);
    expect(await readText(join(e.mirror, 'Docs site.url'))).toContain('URL=https://example.com/v2');
    expect(contentRequests(e.srv).uploads).toEqual([]);
    expect(e.web.listFolder(e.remoteRootId).map((i) => i.name)).toEqual(['Docs site']);
  });
});

describe('ignore rules and symlinks', () => {
  it('keeps ignored files and symlinks off Box and reports the symlink', async () => {
    const outside = join(e.dir, 'outside');
    await writeText(join(outside, 'secret.txt'), 'outside the root\n');
    await symlink(outside, join(e.mirror, 'escape'));
    for (const n of ['.DS_Store', 'Thumbs.db', 'notes.txt.swp', '~$report.docx', '.~lock.report.odt#', 'disk.iso', 'build/out.o']) {
      await writeText(join(e.mirror, n), 'ignored\n');
    }
    await writeFile(join(e.mirror, 'kept.txt'), 'kept\n');
    const r = await e.sync();
    expect([0, 1], explain(r)).toContain(r.code);
    expect(e.web.listFolder(e.remoteRootId).map((i) => i.name).sort()).toEqual(['Docs site', 'kept.txt']);
    expect(r.stderr).toMatch(/escape/);
    expect(r.stderr).toMatch(/symlink/i);
    expect(await readText(join(outside, 'secret.txt'))).toBe('outside the root\n');
  });
});
