/**
 * The readable output of the item commands and their argument parsing: names from Box or disk reach the terminal
 * escaped (core/escape.ts), dates without a time mean local midnight, durations are checked.
 */
import { describe, expect, it } from 'vitest';
import { asRelPath, asRootId } from '../../src/core/model.js';
import { parseDate, parseDuration } from '../../src/cli/commands/items.js';
import { formatItemResult } from '../../src/daemon/control/item-text.js';

const ESC = '\u001b';
const evil = `/m/${ESC}[2Jevil\u202ename.txt`;

describe('item command output', () => {
  it('escapes control and bidi characters in every listing', () => {
    const outputs = [
      formatItemResult('history', {
        entries: [{ seq: 1, root: asRootId('r'), path: asRelPath('x'), kind: 'download', reason: `new on Box ${ESC}[31m`, ok: true, error: null, atMs: 0, localPath: evil }],
      }),
      formatItemResult('trash-list', { entries: [{ source: 'box', id: '1', path: evil, kind: 'file', sizeBytes: 1, trashedAtMs: 0 }] }),
      formatItemResult('conflicts', { conflicts: [{ copyPath: evil, originalPath: evil, madeAtMs: 0, local: { sizeBytes: 1, mtimeMs: 0 }, remote: null }] }),
      formatItemResult('info', {
        path: evil, root: asRootId('r'), rootPath: '/m', relPath: asRelPath('x'), kind: 'file', boxId: '1', etag: '0', versionId: '2', sizeBytes: 3, sha1: null,
        state: 'in-sync', stateDetail: 'ok', lock: { ours: false, byUserId: `${ESC}]0;x`, expiresAtMs: null, preventDownload: false },
        sharedLink: { url: `https://app.box.com/s/${ESC}`, downloadUrl: null, access: 'open', passwordEnabled: false, expiresAtMs: null },
        webUrl: 'https://app.box.com/file/1', lastOperation: null,
      }),
    ];
    for (const out of outputs) {
      expect(out).not.toContain(ESC);
      expect(out).not.toContain('\u202e');
      expect(out).toContain('\\x1b');
    }
  });
});

describe('item command arguments', () => {
  it('reads a date without a time as local midnight, and refuses the past and nonsense', () => {
    expect(parseDate('2031-02-03')).toBe(new Date(2031, 1, 3).getTime());
    expect(parseDate('2031-02-03T18:30:00Z')).toBe(Date.UTC(2031, 1, 3, 18, 30));
    expect(() => parseDate('2031-02-30')).toThrow('is not a date');
    expect(() => parseDate('2001-01-01')).toThrow('in the past');
    expect(() => parseDate('soon')).toThrow('is not a date');
  });

  it('reads durations in s, m, h, d and w', () => {
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('30m')).toBe(1_800_000);
    expect(parseDuration('2d')).toBe(172_800_000);
    expect(parseDuration('1w')).toBe(604_800_000);
    expect(() => parseDuration('yesterday')).toThrow('not a duration');
  });
});
