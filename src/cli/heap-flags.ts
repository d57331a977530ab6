/**
 * V8's heap sizing for a small resident set (issue 29 point 5), set by the CLI as it starts (heap-tuning.ts).
 *
 * Left to its defaults, V8 lets the old generation grow to up to four times what was live after its last full
 * collection: in a first mirror of 20,000 small files, 44-79 MiB of old generation committed at the peak (23-75 MiB
 * of it in use, uncollected garbage included). `--optimize-for-size`, set at run time (no second process, no
 * re-exec, so stdin, stdout, signals and exit codes are the process's own), makes V8 grow it by a small factor
 * instead (more frequent full collections). Measured (README.md, "Performance"): that first mirror's peak RSS
 * 196-231 MiB before, 147-150 MiB after (old generation 31 MiB), for about a sixth more CPU; 200 files of 200 KB,
 * 164-170 MiB before, 120-137 after, for about a fifth more CPU.
 *
 * `--semi-space-growth-factor=1` keeps the young generation at its first size (two semi-spaces of 1 MiB) instead of
 * letting it grow to 2 x 16 MiB while downloads allocate: the same as `--max-semi-space-size=1` at launch, which
 * cannot be set at run time. A new worker thread puts that flag back to V8's default as its isolate starts, so the
 * file workers set it again first thing and when online (local/worker-heap-flags.ts). Measured with the malloc
 * arenas capped (malloc-native.ts): the same peak as that launch flag, 127 against 129 MiB at 20,000 files (143-144
 * without either), for no CPU the bench could see (README.md, "Performance").
 *
 * Set for every command (the daemon too). A flag is not set when the user gave node a flag of its own on the same
 * matter on the command line or in NODE_OPTIONS; none is with BOXSYNC_V8_HEAP=default in the environment.
 *
 * A short run puts V8's defaults back (relaxHeapFlags; run-heap.ts decides when: a `sync --once` over a journal
 * already there) and sets the flags again once its pass plans big transfers (tightenHeapFlags). The flags cost that
 * run about a fifth of its CPU in collections (most of it `--optimize-for-size`'s frequent full collections, on
 * V8's helper threads as well as the main one): after 100 + 100 edits on 100,000 files 1.50 s of CPU with them,
 * 1.26 s without, for 140 instead of 111 MiB peak RSS (README.md, "Performance").
 */
import { setFlagsFromString } from 'node:v8';
import { keepAfterWorkerStart } from '../local/worker-heap-flags.js';

/** Each flag, with the node flags of the user's own on the same matter (which leave it unset). */
const FLAGS: readonly { readonly flag: string; readonly own: RegExp }[] = [
  { flag: '--optimize-for-size', own: /--(?:no[-_])?optimize[-_]for[-_]size\b/ },
  { flag: '--semi-space-growth-factor=1', own: /--(?:max[-_]semi[-_]space[-_]size|min[-_]semi[-_]space[-_]size|semi[-_]space[-_]growth[-_]factor)\b/ },
];

export const HEAP_FLAGS: readonly string[] = FLAGS.map((f) => f.flag);

/** The flags boxsync sets for a process started with these node arguments and this environment. */
export function heapFlagsWanted(execArgv: readonly string[], env: NodeJS.ProcessEnv): string[] {
  if (env.BOXSYNC_V8_HEAP === 'default') return [];
  const own = [...execArgv, env.NODE_OPTIONS ?? ''].join(' ');
  return FLAGS.filter((f) => !f.own.test(own)).map((f) => f.flag);
}

/** Set the flags heapFlagsWanted gives (and again after each worker thread starts); the flags set. */
export function applyHeapFlags(execArgv: readonly string[] = process.execArgv, env: NodeJS.ProcessEnv = process.env): readonly string[] {
  const flags = heapFlagsWanted(execArgv, env);
  for (const flag of flags) setFlagsFromString(flag);
  keepAfterWorkerStart(flags);
  applied = flags;
  return flags;
}

let applied: readonly string[] = [];
let relaxed = false;

/** Each flag boxsync sets, and V8's default on the same matter (what relaxHeapFlags sets instead). */
const DEFAULT_OF: Readonly<Record<string, string>> = {
  '--optimize-for-size': '--no-optimize-for-size',
  '--semi-space-growth-factor=1': '--semi-space-growth-factor=2',
};

/** The flags in force in this process: those applyHeapFlags set, none while relaxed. */
export function appliedHeapFlags(): readonly string[] {
  return relaxed ? [] : applied;
}

/** Put V8's defaults back for the flags applyHeapFlags set (none set: nothing to do); a worker start keeps them. */
export function relaxHeapFlags(): void {
  if (relaxed || applied.length === 0) return;
  for (const flag of applied) setFlagsFromString(DEFAULT_OF[flag] ?? flag);
  keepAfterWorkerStart([]);
  relaxed = true;
}

/** Set the flags of applyHeapFlags again after relaxHeapFlags (and again after each worker thread starts). */
export function tightenHeapFlags(): void {
  if (!relaxed) return;
  for (const flag of applied) setFlagsFromString(flag);
  keepAfterWorkerStart(applied);
  relaxed = false;
}
