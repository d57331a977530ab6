import { describe, expect, it } from 'vitest';
import { errorText, escapeText, redactSecrets, safeText, terminalSafeJson } from '../../src/core/escape.js';
import { escapeLogLine } from '../../src/logger.js';

describe('escapeText', () => {
  it('makes terminal control sequences visible and keeps ordinary names', () => {
    expect(escapeText('\u001b[2Jboom')).toBe('\\x1b[2Jboom');
    expect(escapeText('a\u0000b\u0007c\rd\u009be')).toBe('a\\x00b\\x07c\\x0dd\\x9be');
    expect(escapeText('Résumé – 履歴書.pdf')).toBe('Résumé – 履歴書.pdf');
    expect(escapeText('evil\u202Etxt.exe')).toBe('evil\\u{202e}txt.exe');
    expect(escapeText('a\\b')).toBe('a\\\\b');
  });

  it('returns text that needs no escape as it is, and escapes every character the slow path escapes (all of the BMP, and astral characters and lone surrogates)', () => {
    // The reference: the character-by-character rule, for every code point on its own and beside plain text.
    const escapes = (code: number): boolean => code === 0x5c || code < 0x20 || code === 0x7f || (code >= 0x80 && code < 0xa0) || [0x2028, 0x2029, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069].includes(code);
    let escaped = 0;
    for (let code = 0; code <= 0xffff; code++) {
      const ch = String.fromCharCode(code);
      const out = escapeText(`a${ch}b`);
      if (escapes(code)) {
        escaped += 1;
        expect(out, `U+${code.toString(16)}`).not.toBe(`a${ch}b`);
      } else expect(out, `U+${code.toString(16)}`).toBe(`a${ch}b`);
    }
    expect(escaped).toBe(1 + 32 + 1 + 32 + 13);
    expect(escapeText('\u{1F600} \u{10FFFF}')).toBe('\u{1F600} \u{10FFFF}');
    const plain = 'dir-1/file-2.bin';
    expect(escapeText(plain)).toBe(plain);
  });
});

describe('redactSecrets', () => {
  it('hides bearer tokens and token-valued fields', () => {
    expect(redactSecrets('denied for Authorization: Bearer abcDEF0123456789xyz')).toBe('denied for Authorization: Bearer [REDACTED]');
    expect(redactSecrets('url?access_token=s3cr3tTOKEN&x=1')).toBe('url?access_token=[REDACTED]&x=1');
    expect(redactSecrets('{"refresh_token":"r-123456789"}')).toBe('{"refresh_token":"[REDACTED]"}');
    expect(redactSecrets('nothing secret here')).toBe('nothing secret here');
  });
  it('safeText does both and cuts long text', () => {
    expect(safeText('Bearer abcdefghijklmnop\u001b]0;x\u0007')).toBe('Bearer [REDACTED]\\x1b]0;x\\x07');
    expect(safeText('x'.repeat(2000)).length).toBe(1001);
  });
});

describe('terminalSafeJson, errorText and escapeLogLine', () => {
  it('terminalSafeJson escapes what JSON.stringify leaves raw and keeps the same JSON value', () => {
    const value = { name: 'csi\u009b2J \u202eexe del\u007f', esc: '\u001b[2J' };
    const json = terminalSafeJson(JSON.stringify(value));
    expect(json).not.toMatch(/[\u007f-\u009f\u202a-\u202e]/);
    expect(json).toContain('\\u009b');
    expect(JSON.parse(json)).toEqual(value);
  });

  it('errorText escapes and redacts a thrown message', () => {
    expect(errorText(new Error('open "a\u001b[2J\nb": Bearer abcdefghijkl'))).toBe('open "a\\x1b[2J\\x0ab": Bearer [REDACTED]');
    expect(errorText('plain')).toBe('plain');
  });

  it('escapeLogLine escapes every string of a JSON log line (keys, message, nested error stack), and text lines too', () => {
    const line = `${JSON.stringify({ level: 40, msg: 'x\u001b[2Jy', err: { stack: 'at\nnext' }, ['k\u009b']: ['\u202e'] })}\n`;
    const out = escapeLogLine(line);
    expect(out.endsWith('\n')).toBe(true);
    expect(JSON.parse(out)).toEqual({ level: 40, msg: 'x\\x1b[2Jy', err: { stack: 'at\\x0anext' }, ['k\\x9b']: ['\\u{202e}'] });
    expect(escapeLogLine('not json \u001b[2J\n')).toBe('not json \\x1b[2J\n');
  });
});
