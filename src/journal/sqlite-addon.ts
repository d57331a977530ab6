/**
 * better-sqlite3's native addon, found once by its file, for `new Database(path, { nativeBinding })`.
 *
 * Left to itself, better-sqlite3 finds its addon with the `bindings` package on the first open: two more modules
 * loaded from node_modules and a stack trace made to learn which file called it (its package's root). The bundle of
 * `sync` (scripts/bundle-cli.mjs) holds better-sqlite3's JavaScript, so that a run does not load and compile its
 * dozen modules one by one from node_modules: there `bindings` would see the bundle as its caller and look in the
 * wrong package. So the addon is looked for here, under better-sqlite3's own package folder, in the folders and the
 * order `bindings` tries first (a Release build, which is what better-sqlite3's install makes, comes after a
 * Debug one). Not found there: undefined, and better-sqlite3 asks `bindings` as before, which from the bundle looks
 * in boxsync's own package and fails (journal_unusable, with bindings' list of the paths it tried); the places
 * `bindings` tries after these are node-pre-gyp's, which better-sqlite3's install does not use.
 * test/journal/sqlite-addon.test.ts.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The folders `bindings` (1.5) tries first under a package's root, in its order. */
const FOLDERS = ['build', join('build', 'Debug'), join('build', 'Release'), join('out', 'Debug'), 'Debug', join('out', 'Release'), 'Release', join('build', 'default')];
const FILE = 'better_sqlite3.node';

let found: string | null | undefined;

/** The path of better-sqlite3's addon, or undefined when none is in the usual places (better-sqlite3 then finds it). */
export function sqliteAddonPath(): string | undefined {
  if (found === undefined) {
    try {
      const root = dirname(createRequire(import.meta.url).resolve('better-sqlite3/package.json'));
      found = FOLDERS.map((f) => join(root, f, FILE)).find((f) => existsSync(f)) ?? null;
    } catch {
      found = null;
    }
  }
  return found ?? undefined;
}

/** better-sqlite3's options with its addon's path when found (sqliteAddonPath), merged into `options`. */
export function withSqliteAddon<T extends object>(options: T): T & { nativeBinding?: string } {
  const path = sqliteAddonPath();
  return path === undefined ? options : { ...options, nativeBinding: path };
}
