/**
 * The order of paths in the journal's trees: code point order, which is SQLite's BINARY order of the UTF-8 paths
 * (the order of the trees' keyset pages, journal `localUnder`, `syncedUnder`). The walks that merge two trees
 * (engine/out-of-sync.ts) rely on it; the journal checks it as it reads (journal/path-table.ts): rows out of this
 * order are a damaged index (integrity_check: "row not in PRIMARY KEY order"), which quick_check does not see.
 */

/**
 * Code point order. UTF-16 order differs from it only where a surrogate meets a unit from U+E000 up; a surrogate
 * stands for a code point above U+FFFF, so it sorts last.
 */
export function comparePaths(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    return xs === ys ? x - y : xs ? 1 : -1;
  }
  return a.length - b.length;
}

/**
 * Whether `next` may follow `prev` in a tree read in path order: strictly after it. JavaScript's own comparison
 * first (the common case, in native code); comparePaths only when it says no, so an order right by code points
 * but not by UTF-16 units is accepted. Not seen: rows in UTF-16 order that code point order refuses (a character
 * above U+FFFF before one from U+E000 to U+FFFF at their first difference).
 */
export function followsInPathOrder(prev: string, next: string): boolean {
  return prev < next || comparePaths(prev, next) < 0;
}
