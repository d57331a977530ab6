/**
 * Box JSON parsing. Integers beyond 2^53 (`next_stream_position`, and ids in some doc examples) stay decimal
 * strings instead of being rounded by JSON.parse; every other number is a plain number.
 */
import { isInteger, isSafeNumber, parse } from 'lossless-json';

export function parseBoxJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  return parse(text, null, (s: string) => (isInteger(s) && !isSafeNumber(s) ? s : Number(s)));
}
