import { describe, expect, it } from 'vitest';
import { decodeItem, encodeTime } from '../../../src/remote/box/decode.js';
import { parseBoxJson } from '../../../src/remote/box/json.js';
import fc from 'fast-check';
import { isInteger, isSafeNumber, parse as lossless } from 'lossless-json';
import type { WireItem } from '../../../src/remote/box/wire-types.js';

describe('decoding Box JSON at the edge', () => {
  it('keeps integers beyond 2^53 exact and leaves other numbers as numbers', () => {
    const v = parseBoxJson('{"next_stream_position":1152922976252290886,"chunk_size":3,"size":1.5e3}') as Record<string, unknown>;
    expect(v.next_stream_position).toBe('1152922976252290886');
    expect(v.chunk_size).toBe(3);
    expect(v.size).toBe(1500);
  });

  it('parses as lossless-json does: long digits in names, fractions and exponents are left alone', () => {
    const texts = [
      '{"a":"id 12345678901234567890 in a name","b":-9007199254740993,"c":[9007199254740991,9007199254740992]}',
      '[0.12345678901234567890, 1.5e12345678901234567, 12345678901234567890.5, -12345678901234567890e2]',
      '{"q":"\\"12345678901234567890\\"","n":1000000000000000000,"m":[12345678901234567890]}',
      '12345678901234567890',
      '{"deep":{"x":[{"y":99999999999999999999}]},"s":"\\u0031234567890123456789"}',
      // Digit runs inside SHA-1s (no long integer: JSON.parse alone), and beside one.
      '{"sha1":"f1234567890123456789f0a1b2c3d4e5f6a7b8c9","file_version":{"sha1":"0123456789012345678901234567890123456789"}}',
      '{"sha1":"f1234567890123456789f0a1b2c3d4e5f6a7b8c9","n":\n12345678901234567890\t,"m":[ -12345678901234567890 ]}',
    ];
    for (const t of texts) expect(parseBoxJson(t)).toEqual(lossless(t, null, (s: string) => (isInteger(s) && !isSafeNumber(s) ? s : Number(s))));
    expect(parseBoxJson('{"b":-9007199254740993}')).toEqual({ b: '-9007199254740993' });
    expect(parseBoxJson('  ')).toBeUndefined();
    expect(() => parseBoxJson('{"a":')).toThrow(SyntaxError);
  });

  it('parses random JSON with long integers as lossless-json does', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), fc.array(fc.bigInt({ min: -(10n ** 22n), max: 10n ** 22n }), { maxLength: 4 }), (value, ints) => {
        const text = JSON.stringify({ value, ints: '__INTS__' }).replace('"__INTS__"', `[${ints.join(',')}]`);
        expect(parseBoxJson(text)).toEqual(lossless(text, null, (s: string) => (isInteger(s) && !isSafeNumber(s) ? s : Number(s))));
      }),
      { numRuns: 300 },
    );
  });

  it('decodes a file: string ids, sha1 lower-cased, size in exponent notation, content_modified_at first', () => {
    const w = parseBoxJson(
      '{"type":"file","id":12345,"etag":2,"sequence_id":7,"name":"a.txt","sha1":"AB12AB12AB12AB12AB12AB12AB12AB12AB12AB12","size":1.2e10,' +
        '"modified_at":"2024-01-02T03:04:05-08:00","content_modified_at":"2023-05-06T07:08:09Z",' +
        '"parent":{"type":"folder","id":0},"file_version":{"type":"file_version","id":99,"sha1":"ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12"},"item_status":"active"}',
    ) as WireItem;
    expect(decodeItem(w)).toEqual({
      id: '12345',
      kind: 'file',
      parentId: '0',
      name: 'a.txt',
      etag: '2',
      sequenceId: '7',
      sha1: 'ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12',
      sizeBytes: 12_000_000_000,
      modifiedAtMs: Date.parse('2023-05-06T07:08:09Z'),
      versionId: '99',
      url: null,
      status: 'active',
    });
  });

  it('falls back to modified_at when content_modified_at is null', () => {
    const e = decodeItem({ type: 'file', id: '1', name: 'f', content_modified_at: null, modified_at: '2024-01-02T03:04:05-08:00' });
    expect(e.modifiedAtMs).toBe(Date.parse('2024-01-02T11:04:05Z'));
  });

  it('decodes a size sent as a string', () => {
    expect(decodeItem({ type: 'file', id: '1', name: 'f', size: '2.5E+3' }).sizeBytes).toBe(2500);
  });

  it('decodes a web link as its own kind with its target URL', () => {
    const e = decodeItem({ type: 'web_link', id: '5', name: 'Docs', url: 'https://example.com/x', etag: '0', sequence_id: '0', parent: { id: '9' } });
    expect(e).toMatchObject({ kind: 'weblink', url: 'https://example.com/x', sha1: null, versionId: null, parentId: '9' });
  });

  it('decodes a trashed item status and refuses an unknown type', () => {
    expect(decodeItem({ type: 'folder', id: '3', name: 'd', item_status: 'trashed' }).status).toBe('trashed');
    expect(() => decodeItem({ type: 'collaboration', id: '3' })).toThrow(/collaboration/);
  });

  it('encodes times as RFC 3339 in whole seconds', () => {
    expect(encodeTime(Date.parse('2024-03-04T05:06:07.891Z'))).toBe('2024-03-04T05:06:07Z');
  });
});
