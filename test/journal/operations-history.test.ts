/**
 * The operation history table (journal v3) on a real SQLite file: newest first, by path or subtree, by time,
 * one row for a report that repeats, and survives reopening.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asRelPath, asRootId } from '../../src/core/model.js';
import { openJournal } from '../../src/journal/open-journal.js';
import { makeTempDir } from '../support/tmp.js';

const R = asRootId('r');
const S = asRootId('s');
let tmp: { dir: string; cleanup: () => Promise<void> };
beforeEach(async () => {
  tmp = await makeTempDir('boxsync-history-');
});
afterEach(async () => {
  await tmp.cleanup();
});

const op = (root: typeof R, path: string, kind: string, atMs: number, extra: { ok?: boolean; reason?: string; error?: string } = {}) => ({
  root,
  path: asRelPath(path),
  kind,
  reason: extra.reason ?? `why ${kind} ${path}`,
  ok: extra.ok ?? true,
  error: extra.error ?? null,
  atMs,
});

describe('operation history', () => {
  it('answers newest first, by path, by subtree, by root and by time, and keeps it across a reopen', () => {
    const file = join(tmp.dir, 'journal.db');
    const { journal } = openJournal(file);
    journal.recordOperation(op(R, 'Docs/a.txt', 'download', 1000));
    journal.recordOperation(op(R, 'Docs/a.txt', 'upload-version', 2000));
    journal.recordOperation(op(R, 'Docs-b.txt', 'upload', 3000));
    journal.recordOperation(op(R, 'Docs', 'create-local-folder', 500));
    journal.recordOperation(op(S, 'Docs/a.txt', 'download', 4000, { ok: false, error: 'boom' }));
    journal.close();

    const again = openJournal(file).journal;
    expect(again.lastOperation(R, asRelPath('Docs/a.txt'))).toMatchObject({ kind: 'upload-version', ok: true, error: null, atMs: 2000 });
    expect(again.lastOperation(S, asRelPath('Docs/a.txt'))).toMatchObject({ ok: false, error: 'boom' });
    expect(again.operations({ root: R, path: asRelPath('Docs') }).map((o) => o.kind)).toEqual(['create-local-folder', 'upload-version', 'download']);
    expect(again.operations({ root: R, path: asRelPath('Docs'), under: false }).map((o) => o.kind)).toEqual(['create-local-folder']);
    expect(again.operations({ sinceMs: 2000 }).map((o) => o.atMs)).toEqual([4000, 3000, 2000]);
    expect(again.operations({ limit: 2 })).toHaveLength(2);
    again.close();
  });

  it('keeps one row for a problem reported again and again, and a new one when it changes', () => {
    const { journal } = openJournal(join(tmp.dir, 'journal.db'));
    for (let i = 0; i < 3; i++) journal.recordOperation(op(R, 'bad:name', 'report', i, { ok: false, reason: 'Box refuses this name' }));
    journal.recordOperation(op(R, 'bad:name', 'report', 9, { ok: false, reason: 'another problem' }));
    expect(journal.operations({ root: R }).map((o) => o.reason)).toEqual(['another problem', 'Box refuses this name']);
    journal.close();
  });
});
