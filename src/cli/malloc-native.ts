/**
 * glibc malloc's tuning for a small resident set (issue 29 point 5), through the native addon native/malloc.c
 * (built by `npm ci` into build/Release/boxsync_malloc.node through scripts/build-native.mjs).
 *
 * glibc gives each thread that allocates an arena of its own, up to 8 per core; each keeps its freed memory
 * resident. Node's threads (V8's platform workers, libuv's pool, the file workers) allocate Buffers and zip and
 * TLS state: 11 arenas at the end of a first mirror of 200 files of 200 KB. mallopt(M_ARENA_MAX, 2) holds every
 * thread that allocates after it to 2: that mirror's peak RSS 124 -> 106 MiB for the same CPU (README.md,
 * "Performance"). It must come before Node's threads allocate, which they do as soon as modules load: so
 * bin/boxsync.js calls it before it imports anything (the rule itself is bin/malloc-rule.js, plain JavaScript shared
 * by both), and
 * heap-tuning.ts calls applyMallocTuning() again for a CLI started another way (tests, `node dist/cli/main.js`), when
 * 5-6 arenas exist already (then it gains little).
 *
 * Never throws, and without the addon (not built, not glibc, not Linux) nothing changes. Not set when the user's
 * environment sets MALLOC_ARENA_MAX (or glibc's tunables, GLIBC_TUNABLES), nor with BOXSYNC_MALLOC=default.
 * BOXSYNC_MALLOC_ADDON names another file to load (a packager's own build; tests point it at a missing file). */
import { loadNativeAddon, nativeAddonPath, type NativeAddonLoad, type NativeAddonSpec } from '../local/native-addon.js';
import { ARENA_MAX, mallocTuningWanted } from '../../bin/malloc-rule.js';

export interface MallocAddon {
  /** 1 when glibc took the setting, 0 when not. */
  mallopt(param: number, value: number): number;
  /** malloc_info(0)'s XML: one `<heap nr="N">` per arena. */
  info(): string;
  readonly M_ARENA_MAX?: number;
}

export type MallocAddonLoad = NativeAddonLoad<MallocAddon>;

export { ARENA_MAX, mallocTuningWanted } from '../../bin/malloc-rule.js';

const MALLOC: NativeAddonSpec<MallocAddon> = {
  file: 'boxsync_malloc.node',
  envVar: 'BOXSYNC_MALLOC_ADDON',
  linuxOnly: 'malloc tuning is Linux (glibc) only',
  accept: (got, path) => {
    if (typeof got.mallopt !== 'function' || typeof got.info !== 'function') return `${path} is not the boxsync malloc addon`;
    return typeof got.M_ARENA_MAX === 'number' ? (got as unknown as MallocAddon) : 'not glibc';
  },
};

export function loadMallocAddon(path?: string): MallocAddonLoad {
  return loadNativeAddon(MALLOC, path);
}

export interface MallocTuning {
  /** The settings taken, e.g. `arena_max=2`. */
  readonly applied: readonly string[];
  /** Why none was, when none was. */
  readonly reason?: string;
}

/** The number of malloc arenas in this process (malloc_info's heaps), or null without the addon. */
export function mallocArenas(env: NodeJS.ProcessEnv = process.env): number | null {
  const load = loadMallocAddon(nativeAddonPath(MALLOC, env));
  if (!load.ok) return null;
  try {
    return (load.addon.info().match(/<heap nr=/g) ?? []).length;
  } catch {
    return null;
  }
}

let applied: MallocTuning | null = null;

/** What applyMallocTuning did in this process (null: not called). */
export function appliedMallocTuning(): MallocTuning | null {
  return applied;
}

/** Tune malloc: the settings taken (e.g. `arena_max=2`), or why none. Never throws. */
export function applyMallocTuning(env: NodeJS.ProcessEnv = process.env): MallocTuning {
  applied = tune(env);
  return applied;
}

function tune(env: NodeJS.ProcessEnv): MallocTuning {
  if (!mallocTuningWanted(env)) return { applied: [], reason: 'the environment chose' };
  const load = loadMallocAddon(nativeAddonPath(MALLOC, env));
  if (!load.ok) return { applied: [], reason: load.reason };
  try {
    const { addon } = load;
    return addon.mallopt(addon.M_ARENA_MAX!, ARENA_MAX) === 1 ? { applied: [`arena_max=${ARENA_MAX}`] } : { applied: [], reason: 'mallopt refused' };
  } catch (e) {
    return { applied: [], reason: e instanceof Error ? e.message : String(e) };
  }
}

