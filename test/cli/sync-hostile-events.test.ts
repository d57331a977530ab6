/**
 * Issue 26, point 4 (Box half): a Box item refused at validation is parked with its Box id and its escaped name,
 * whatever the path it arrives by: an event (the incremental pass of `sync --once`) as well as a listing. Every
 * run lists it and exits 1; nothing raw reaches the terminal; the rest syncs.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exists, explain, listTree, readText, startSyncEnv, type SyncEnv } from './sync-harness.js';

const envs: SyncEnv[] = [];
afterEach(async () => {
  for (const e of envs.splice(0)) await e.close();
});

/** Names Box itself would refuse, as a hostile server could still send them. */
const BAD_NAMES = ['docs/injected.txt', 'a\\b.txt', 'line\nbreak.txt', '\u001b[2Jclear.txt', 'trailing ', '..'];

/** No C0 control byte but the newline that ends a line, and no DEL or C1. */
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

describe('sync --once: malformed Box names that arrive by event', () => {
  it('parks each with its Box id and escaped name, exits 1 on every run, and syncs the rest', async () => {
    const env = await startSyncEnv();
    envs.push(env);
    env.web.uploadFile(env.remoteRootId, 'a.txt', 'a');
    await env.syncOk();
    // New items on Box (their upload events come through the stream), which Box shows under hostile names:
    // in the event, in the item's own answer and in the folder listing alike.
    const badById = new Map<string, string>();
    BAD_NAMES.forEach((name, i) => badById.set(env.web.uploadFile(env.remoteRootId, `bad${i}.txt`, `bad ${i}`).id, name));
    env.web.uploadFile(env.remoteRootId, 'good.txt', 'good');
    const rename = (item: unknown): unknown => {
      const o = item as { id?: unknown } | null;
      const bad = o && typeof o === 'object' ? badById.get(String(o.id)) : undefined;
      return bad === undefined ? item : { ...o, name: bad };
    };
    const ids = [...badById.keys()].join('|');
    env.srv.control.failNext({ method: 'GET', path: new RegExp(`^/2\\.0/files/(${ids})$`), count: 10_000, transform: rename });
    env.srv.control.failNext({
      method: 'GET',
      path: `/2.0/folders/${env.remoteRootId}/items`,
      count: 10_000,
      transform: (b) => ({ ...(b as object), entries: (b as { entries: unknown[] }).entries.map(rename) }),
    });
    env.srv.control.failNext({
      method: 'GET',
      path: '/2.0/events',
      count: 10_000,
      transform: (b) => {
        const body = b as { entries: { source?: unknown }[] };
        return { ...body, entries: body.entries.map((ev) => (ev.source ? { ...ev, source: rename(ev.source) } : ev)) };
      },
    });
    // Run 1 reads the events (an incremental pass); run 2 (a new process, items parked) lists in full.
    for (let run = 1; run <= 2; run++) {
      const r = await env.sync();
      const out = r.stdout + r.stderr;
      expect(r.code, explain(r)).toBe(1);
      expect(out).toMatch(/6 items are parked and not syncing/);
      for (const id of badById.keys()) expect(out, explain(r)).toMatch(new RegExp(`PARKED .*Box id ${id}\\)`));
      // Each name escaped once: a control character as \xNN, a backslash doubled, `/` as \x2f.
      expect(out).toContain('PARKED \\x1b[2Jclear.txt: ');
      expect(out).toContain('PARKED line\\x0abreak.txt: ');
      expect(out).toContain('PARKED a\\\\b.txt: ');
      expect(out).toContain('PARKED docs\\x2finjected.txt: ');
      expect(out, explain(r)).not.toMatch(RAW_CONTROL);
    }
    expect(await readText(join(env.mirror, 'good.txt'))).toBe('good');
    expect(await listTree(env.mirror)).toEqual(['a.txt', 'good.txt']);
    expect(await exists(join(env.mirror, 'docs'))).toBe(false);
    // Once Box shows proper names again, they sync and the run is clean.
    env.srv.control.clearFaults();
    const clean = await env.sync();
    expect(clean.code, explain(clean)).toBe(0);
    expect(await listTree(env.mirror)).toHaveLength(2 + BAD_NAMES.length);
  });
});
