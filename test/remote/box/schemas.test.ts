/** The boundary validation of Box items (schemas.ts): what is refused, with which field, and what passes. */
import { describe, expect, it } from 'vitest';
import { checkItem, nameProblem } from '../../../src/remote/box/schemas.js';
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
