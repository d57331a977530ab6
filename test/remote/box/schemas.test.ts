/** The boundary validation of Box items (schemas.ts): what is refused, with which field, and what passes. */
import { describe, expect, it } from 'vitest';
import { checkItem, itemSchema, nameProblem, plainItem } from '../../../src/remote/box/schemas.js';
import { parseBoxJson } from '../../../src/remote/box/json.js';

const base = { type: 'file', id: '7', etag: '1', sequence_id: '1', name: 'a.txt', size: 3, sha1: 'a9993e364706816aba3e25717850c26c9cd0d89d' };

describe('checkItem', () => {
  it.each([
    [{ ...base, name: '..' }, 'name'],
    [{ ...base, name: 'a/b' }, 'name'],
    [{ ...base, name: 'a\\b' }, 'name'],
    [{ ...base, name: '' }, 'name'],
    [{ ...base, name: 'x\u0000' }, 'name'],
    [{ ...base, name: 'x ' }, 'name'],
    [{ ...base, name: 'é'.repeat(130) }, 'name'],
    [{ ...base, name: 42 }, 'name'],
    [{ ...base, id: undefined }, 'id'],
    [{ ...base, id: 'a b' }, 'id'],
    [{ ...base, id: 2 ** 60 }, 'id'],
    [{ ...base, sha1: 5 }, 'sha1'],
    [{ ...base, sha1: 'zz' }, 'sha1'],
    [{ ...base, size: 1e300 }, 'size'],
    [{ ...base, size: -1 }, 'size'],
    [{ ...base, parent: 'x' }, 'parent'],
    [{ ...base, parent: { id: '99' } }, 'parent.id'],
    [{ ...base, id: '5' }, 'id'],
  ])('refuses %j at field %s', (raw, field) => {
    const c = checkItem(raw, { requireName: true, listedIn: '5' });
    expect(c.ok).toBe(false);
    if (!c.ok && !c.unknownType) expect(c.field).toBe(field);
  });

  it('keeps ids and sequence ids beyond 2^53 exact, as strings', () => {
    const raw = parseBoxJson('{"type":"file","id":"123456789012345678901","sequence_id":123456789012345678901,"etag":"0","name":"big.txt","size":1}');
    const c = checkItem(raw, { requireName: true, listedIn: '0' });
    expect(c).toMatchObject({ ok: true, entry: { id: '123456789012345678901', sequenceId: '123456789012345678901', parentId: '0' } });
  });

  it('skips types it does not sync without calling them errors', () => {
    expect(checkItem({ type: 'collaboration', id: '1' }, { requireName: true })).toEqual({ ok: false, unknownType: true });
  });

  it('escapes the name it reports for a refused item', () => {
    const c = checkItem({ ...base, name: '\u001b[2J/x' }, { requireName: true });
    expect(c).toMatchObject({ ok: false, name: '\\x1b[2J/x', field: 'name' });
  });

  it('names that Box accepts and Linux can hold pass', () => {
    expect(nameProblem('résumé (final).docx')).toBeNull();
    expect(nameProblem('x'.repeat(255))).toBeNull();
    expect(nameProblem('é'.repeat(128))).toMatch(/255 bytes/);
  });
});

describe('plainItem (the schema without its per-field work)', () => {
  // Values for each field: what Box sends, and each way a value can be off (types, lengths, patterns, edges).
  // Mostly the first half of each list (the values Box sends), so that items with all fields fine are common too.
  const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * (r() < 0.9 ? Math.ceil(xs.length / 2) : xs.length))]!;
  const texts = (max: number): unknown[] => [undefined, null, '', 'x', 'x'.repeat(max), 'x'.repeat(max + 1), 5, true, {}];
  const ids: unknown[] = ['0', '123', 'a_b-C', 'x'.repeat(64), 'x'.repeat(65), '', '1 2', '../x', 7, 0, -1, 1.5, 2 ** 53, Number.NaN, null, undefined, {}, ['1']];
  const tokens: unknown[] = [undefined, null, '', '3', 'x'.repeat(256), 'x'.repeat(257), 4, -4.5, Number.POSITIVE_INFINITY, Number.NaN, true, {}];
  const sha1s: unknown[] = [undefined, null, '', 'a9993e364706816aba3e25717850c26c9cd0d89d', 'A9993E364706816ABA3E25717850C26C9CD0D89D', 'g9993e364706816aba3e25717850c26c9cd0d89d', 'abc', 5];
  const sizes: unknown[] = [undefined, null, 0, 3, 2 ** 53 - 1, 2 ** 53, -1, 1.5, Number.NaN, '12', '1e3', 'x', true];
  const parents: unknown[] = [undefined, null, { id: '5' }, { id: 5, name: 'p' }, { id: '' }, { name: 'p' }, [], 'x', { id: null }];
  const versions: unknown[] = [undefined, null, { id: '9' }, { id: '9', sha1: 'a9993e364706816aba3e25717850c26c9cd0d89d' }, { id: '9', sha1: 'xyz' }, { sha1: null }, { id: 9, sha1: null }, 'v', []];
  const fields: [string, unknown[]][] = [
    ['type', ['file', 'folder', 'web_link', 'x'.repeat(64), 'x'.repeat(65), 5, undefined]],
    ['id', ids],
    ['etag', tokens],
    ['sequence_id', tokens],
    ['name', texts(4096)],
    ['sha1', sha1s],
    ['size', sizes],
    ['modified_at', texts(64)],
    ['content_modified_at', texts(64)],
    ['parent', parents],
    ['file_version', versions],
    ['item_status', texts(32)],
    ['url', texts(8192)],
  ];
  const item = (r: () => number): unknown => {
    if (r() < 0.03) return pick(r, [null, [], 'item', 5]);
    // Half of them: an ordinary item with one field set to any of its values (each edge meets an otherwise fine item).
    if (r() < 0.5) {
      const [k, xs] = fields[Math.floor(r() * fields.length)]!;
      return { ...base, parent: { id: '1' }, [k]: xs[Math.floor(r() * xs.length)] };
    }
    const o: Record<string, unknown> = {};
    const set = (k: string, v: unknown): void => {
      if (v !== undefined || r() < 0.5) o[k] = v;
    };
    set('type', pick(r, ['file', 'folder', 'web_link', 'x'.repeat(65), 5, undefined]));
    set('id', pick(r, ids));
    set('etag', pick(r, tokens));
    set('sequence_id', pick(r, tokens));
    set('name', pick(r, texts(4096)));
    set('sha1', pick(r, sha1s));
    set('size', pick(r, sizes));
    set('modified_at', pick(r, texts(64)));
    set('content_modified_at', pick(r, texts(64)));
    set('parent', pick(r, parents));
    set('file_version', pick(r, versions));
    set('item_status', pick(r, texts(32)));
    set('url', pick(r, texts(8192)));
    if (r() < 0.2) o['extra'] = pick(r, [1, 'x', null, {}]);
    return o;
  };

  it('accepts only items the schema accepts, and gives them as the schema does; the rest is left to the schema', () => {
    let seed = 29;
    const r = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    let taken = 0;
    let left = 0;
    for (let i = 0; i < 20_000; i++) {
      const raw = item(r);
      const fast = plainItem(raw);
      const schema = itemSchema.safeParse(raw);
      if (fast === undefined) {
        left += 1;
        continue;
      }
      taken += 1;
      expect(schema.success, JSON.stringify(raw)).toBe(true);
      expect(fast).toEqual(schema.data);
    }
    // Both ways are exercised: most random items are refused, many are taken.
    expect(taken).toBeGreaterThan(100);
    expect(left).toBeGreaterThan(100);
    // Box's ordinary answers take the fast way.
    expect(plainItem(base)).toBe(base);
    expect(plainItem({ ...base, parent: { id: '0', type: 'folder' }, file_version: { id: '1', sha1: base.sha1 }, modified_at: '2026-11-28T10:00:00Z', item_status: 'active' })).toBeDefined();
  });
});
