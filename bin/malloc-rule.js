// glibc malloc's tuning rule (issue 29 point 5), in plain JavaScript with no imports: bin/boxsync.js applies it
// before it imports anything (Node's threads have not allocated yet), and src/cli/malloc-native.ts applies the same
// rule for a CLI started another way. src/cli/malloc-native.ts says why and what it gains.

/** Arenas at most: the main thread's and one shared by every other thread that allocates. */
export const ARENA_MAX = 2;

/**
 * Whether boxsync tunes malloc in a process with this environment: not when the user sets MALLOC_ARENA_MAX or
 * glibc's malloc tunables (GLIBC_TUNABLES) of their own, nor with BOXSYNC_MALLOC=default.
 */
export function mallocTuningWanted(env) {
  return env.BOXSYNC_MALLOC !== 'default' && env.MALLOC_ARENA_MAX === undefined && !/glibc\.malloc\./.test(env.GLIBC_TUNABLES ?? '');
}
