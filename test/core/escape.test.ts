import { describe, expect, it } from 'vitest';
import { escapeText, redactSecrets, safeText } from '../../src/core/escape.js';

describe('escapeText', () => {
  it('makes terminal control sequences visible and keeps ordinary names', () => {
    expect(escapeText('\u001b[2Jboom')).toBe('\\x1b[2Jboom');
    expect(escapeText('a\u0000b\u0007c\rd\u009be')).toBe('a\\x00b\\x07c\\x0dd\\x9be');
    expect(escapeText('Résumé – 履歴書.pdf')).toBe('Résumé – 履歴書.pdf');
    expect(escapeText('evil\u202Etxt.exe')).toBe('evil\\u{202e}txt.exe');
    expect(escapeText('a\\b')).toBe('a\\\\b');
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
