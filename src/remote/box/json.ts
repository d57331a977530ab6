/**
 * Box JSON parsing. Integers beyond 2^53 (`next_stream_position`, and ids in some doc examples) stay decimal
 * strings instead of being rounded by JSON.parse; every other number is a plain number.
 *
 * The parse itself is the engine's JSON.parse: a page of 500 events parsed by a JavaScript parser (lossless-json)
 * held the daemon's event loop for 0.7 s. Before it, the integer tokens of 16 digits or more (the only ones that
 * can be unsafe) that lossless-json counts as unsafe are quoted, in one regular-expression pass that skips string
 * literals. Duplicate keys in an object: the last wins, as in JSON.parse and every other Box client.
 */
import { isSafeNumber } from 'lossless-json';

/**
 * A string literal (skipped whole, so digits inside names are never touched) or a whole integer token of 16 or
 * more digits: not the fraction or exponent of a number (nothing of a number before it), not followed by one.
 */
const STRING_OR_LONG_INTEGER = /"(?:[^"\\]|\\.)*"|(?<![\w.+-])-?\d{16,}(?![\w.])/g;
/**
 * Could the text hold a long integer token at all: 16 or more digits where a JSON number can stand (after `:`, `[`,
 * `,`, a space or the start, and before `,`, `]`, `}`, a space or the end). A quick test that lets most answers
 * through to JSON.parse alone: the SHA-1s of an events page (about 1 in 190 holds 16 decimal digits in a row) sent
 * most pages of 200 events through the slower replace (a page of 500 events, 700 KB: 11 ms against 2.6 ms). Every token
 * the replace below would quote passes it (a digit run inside a string may too: the replace then leaves it alone).
 */
const MAYBE_LONG_INTEGER = /(?:^|[:[,\s])-?\d{16,}(?:$|[,\]}\s])/;

export function parseBoxJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  if (!MAYBE_LONG_INTEGER.test(text)) return JSON.parse(text);
  return JSON.parse(text.replace(STRING_OR_LONG_INTEGER, (m) => (m.startsWith('"') || isSafeNumber(m) ? m : `"${m}"`)));
}
