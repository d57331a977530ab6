/**
 * First runs of `boxsync sync --once`: a full download of box-server's sample content, a second run that does
 * nothing, and a first run onto a local folder that already holds the same files (linked by SHA-1, no transfer).
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { contentRequests, explain, listTree, startSyncEnv, summaryLine, TOKEN, writeRequests, writeText, type SyncEnv } from './sync-harness.js';

let env: SyncEnv | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
});

/** Every file below a Box folder, as path -> {id, sha1}, through the control API. */
function boxFiles(e: SyncEnv, folderId: string, prefix = ''): Map<string, { id: string; type: string; sha1?: string }> {
  const out = new Map<string, { id: string; type: string; sha1?: string }>();
  for (const item of e.web.listFolder(folderId)) {
    const path = prefix === '' ? item.name : `${prefix}/${item.name}`;
    if (item.type === 'folder') for (const [p, v] of boxFiles(e, item.id, path)) out.set(p, v);
    else out.set(path, { id: item.id, type: item.type, ...(item.sha1 ? { sha1: item.sha1 } : {}) });
  }
  return out;
}

const sha1 = (b: Buffer): string => createHash('sha1').update(b).digest('hex');

describe('first run', () => {
  it('mirrors the sample content, with one summary line on stdout, then a second run does nothing', async () => {
    const e = await startSyncEnv({ sample: true, remoteId: '0' });
    env = e;
    const first = await e.sync();
    expect(first.code, explain(first)).toBe(0);
    expect(first.stdout.trim().split('\n')).toHaveLength(1);
    expect(summaryLine(first)).toMatch(/^boxsync: converged in .*: \d+ downloaded/);
    expect(first.stdout + first.stderr).not.toContain(TOKEN);

    const files = boxFiles(e, '0');
    // The empty "Mirror" folder the harness made plus the sample content.
    expect(files.size).toBeGreaterThan(2);
    for (const [path, item] of files) {
      if (item.type === 'file') {
        const local = await readFile(join(e.mirror, path));
        expect(sha1(local), path).toBe(item.sha1);
        expect(local.equals(e.web.readFile(item.id)), path).toBe(true);
      } else {
        expect(item.type).toBe('web_link');
        const text = await readFile(join(e.mirror, `${path}.url`), 'utf8');
        expect(text).toMatch(/^\[InternetShortcut\]\r?\nURL=https?:\/\//);
      }
    }
    const downloads = contentRequests(e.srv).downloads.length;
    expect(downloads).toBe([...files.values()].filter((f) => f.type === 'file').length);

    e.srv.control.clearRequests();
    const second = await e.sync();
    expect(second.code, explain(second)).toBe(0);
    expect(summaryLine(second)).toMatch(/converged .*: 0 downloaded \(0 B\), 0 uploaded \(0 B\)/);
    expect(contentRequests(e.srv)).toEqual({ downloads: [], uploads: [] });
    expect(writeRequests(e.srv)).toEqual([]);
  });

  it('links files that are already identical on both sides without transferring them', async () => {
    const e = await startSyncEnv();
    env = e;
    const docs = e.web.createFolder(e.remoteRootId, 'Docs');
    e.web.uploadFile(docs.id, 'same.txt', 'identical content\n');
    e.web.uploadFile(e.remoteRootId, 'top.bin', Buffer.alloc(3000, 7));
    await writeText(join(e.mirror, 'Docs', 'same.txt'), 'identical content\n');
    await writeText(join(e.mirror, 'top.bin'), Buffer.alloc(3000, 7));
    e.srv.control.clearRequests();

    const r = await e.sync();
    expect(r.code, explain(r)).toBe(0);
    expect(contentRequests(e.srv)).toEqual({ downloads: [], uploads: [] });
    expect(summaryLine(r)).toMatch(/linked without transfer/);
    expect(await listTree(e.mirror)).toEqual(['Docs/', 'Docs/same.txt', 'top.bin']);
  });

  it('on a non-TTY writes one log line per operation to stderr', async () => {
    const e = await startSyncEnv();
    env = e;
    e.web.uploadFile(e.remoteRootId, 'a.txt', 'a');
    await writeText(join(e.mirror, 'b.txt'), 'b');
    const r = await e.sync();
    expect(r.code, explain(r)).toBe(0);
    expect(r.stderr).toMatch(/^download\s+a\.txt\s+\(.+\)$/m);
    expect(r.stderr).toMatch(/^upload\s+b\.txt\s+\(.+\)$/m);
    expect(summaryLine(r)).toMatch(/1 downloaded \(1 B\), 1 uploaded \(1 B\)/);
  });
});
