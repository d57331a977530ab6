/**
 * Box sequence_id comparison. PURE.
 *
 * A sequence_id is a non-negative decimal string that grows with every change of an item. It is compared
 * numerically, as an arbitrarily large decimal (never through Number: precision would be lost past 2^53).
 * An empty or malformed id sorts before every well-formed one, so that an event without a usable
 * sequence_id never wins over a known state.
 */

const decimal = /^\d+$/;

/** -1, 0 or 1 as a < b, a = b, a > b. */
export function compareSequence(a: string | null, b: string | null): -1 | 0 | 1 {
  const okA = a !== null && decimal.test(a);
  const okB = b !== null && decimal.test(b);
  if (!okA || !okB) return okA === okB ? 0 : okA ? 1 : -1;
  const x = stripZeros(a);
  const y = stripZeros(b);
  if (x.length !== y.length) return x.length < y.length ? -1 : 1;
  return x === y ? 0 : x < y ? -1 : 1;
}

function stripZeros(s: string): string {
  let i = 0;
  while (i < s.length - 1 && s.charCodeAt(i) === 48) i++;
  return s.slice(i);
}
