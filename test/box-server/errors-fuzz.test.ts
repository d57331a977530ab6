// Property tests over hostile input: generated names must be judged exactly by Box's name rules
// (WIRE.md section 12: 1..255 characters; no '/', '\', control characters, trailing space, '.' or '..';
// unique case-insensitively), and arbitrary JSON bodies must never produce a 5xx or stop the server.
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { boxHttp, expectBoxError, obj, useBoxServer } from '../support/box-server.js';

const handle = useBoxServer();
const http = () => boxHttp(handle.srv);

afterEach(async () => {
  const alive = await http().get('/users/me');
  expect(alive.status, 'box-server must keep serving after hostile input').toBe(200);
});

// Single UTF-16 code units only, so "characters" means the same thing to every reader of the rules.
const ALPHABET = ['a', 'A', 'z', '0', ' ', '.', '-', '_', '/', '\\', '\u0000', '\u0001', '\u001f', '\u007f', '\t', '\n', 'é', '日', '<', '>', ':', '|', '?', '*', '"', '%'];
const nameArb = fc.oneof(
  fc.string({ unit: fc.constantFrom(...ALPHABET), minLength: 0, maxLength: 12 }),
  fc.string({ unit: fc.constantFrom('a', 'b', ' ', '/'), minLength: 250, maxLength: 260 }),
  fc.constantFrom('.', '..', ' ', 'a ', ' a', '...', '.hidden'),
);

type Verdict = 'ok' | 'too_long' | 'invalid';

function verdict(name: string): Verdict {
  if (name.length > 255) return 'too_long';
  if (name === '' || name === '.' || name === '..' || /[/\\\u0000-\u001f\u007f]/.test(name) || name.endsWith(' ')) return 'invalid';
  return 'ok';
}

describe('generated names follow Box name rules exactly', () => {
  it('accepts exactly the legal names, round-trips them byte for byte, and refuses the rest with the right code', async () => {
    const parent = obj((await http().post('/folders', { body: { name: `fuzz-${process.pid}`, parent: { id: '0' } } })).json);
    const pid = String(parent.id);
    const taken = new Set<string>();
    await fc.assert(
      fc.asyncProperty(nameArb, async (name) => {
        const r = await http().post('/folders', { body: { name, parent: { id: pid } } });
        const v = verdict(name);
        if (v === 'ok' && taken.has(name.toLowerCase())) {
          expectBoxError(r, 'POST', 409, 'item_name_in_use');
          return;
        }
        if (v === 'ok') {
          expect(r.status, `${JSON.stringify(name)}: ${r.text}`).toBe(201);
          expect(obj(r.json).name).toBe(name);
          taken.add(name.toLowerCase());
          return;
        }
        // A name that breaks several rules may be reported under either of them.
        const codes = v === 'too_long' ? (verdict(name.slice(0, 255)) === 'ok' ? ['item_name_too_long'] : ['item_name_too_long', 'item_name_invalid']) : ['item_name_invalid', 'bad_request'];
        expectBoxError(r, 'POST', 400, codes);
      }),
      { numRuns: 150, seed: 20261122 },
    );
    expect(taken.size).toBeGreaterThan(0);
  });
});

describe('arbitrary JSON bodies', () => {
  it('POST /folders and PUT /files answer 2xx or a Box 4xx error, never a 5xx', async () => {
    const up = await http().upload('/files/content', { name: `fuzz-target-${process.pid}.txt`, parent: { id: '0' } }, 'x');
    const fileId = String(obj((obj(up.json).entries as unknown[])[0]).id);
    const bodyArb = fc.oneof(
      fc.jsonValue(),
      fc.record({ name: fc.jsonValue(), parent: fc.oneof(fc.jsonValue(), fc.record({ id: fc.jsonValue() })) }, { requiredKeys: [] }),
      fc.record({ parent: fc.record({ id: fc.jsonValue() }), lock: fc.jsonValue(), shared_link: fc.jsonValue() }, { requiredKeys: [] }),
    );
    await fc.assert(
      fc.asyncProperty(bodyArb, fc.constantFrom('folders', 'file'), async (body, target) => {
        const r =
          target === 'folders'
            ? await http().post('/folders', { rawBody: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } })
            : await http().put(`/files/${fileId}`, { rawBody: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
        expect(r.status, `${JSON.stringify(body)} -> ${r.text.slice(0, 300)}`).toBeLessThan(500);
        if (r.status >= 400) {
          const err = obj(r.json);
          expect(err.type).toBe('error');
          expect(err.status).toBe(r.status);
        }
      }),
      { numRuns: 150, seed: 42 },
    );
  });
});
