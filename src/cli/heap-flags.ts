/**
 * V8's heap sizing for a small resident set (issue 29 point 5), set by the CLI as it starts (heap-tuning.ts).
 *
 * Left to its defaults, V8 lets the old generation grow to up to four times what was live after its last full
 * collection: in a first mirror of 20,000 small files, 44-79 MiB of old generation committed at the peak (23-75 MiB
 * of it in use, uncollected garbage included). `--optimize-for-size`, set at run time (no second process, no
 * re-exec, so stdin, stdout, signals and exit codes are the process's own), makes V8 grow it by a small factor
 * instead (more frequent full collections). Measured (README.md, "Performance"): that first mirror's peak RSS
 * 196-231 MiB before, 147-150 MiB after (old generation 31 MiB), for about a sixth more CPU; 200 files of 200 KB,
 * 164-170 MiB before, 120-137 after, for about a fifth more CPU. A young generation kept at its first size
 * (`--semi-space-growth-factor=1`, which Node resets whenever it starts a worker thread) did not lower the
 * 20,000-file peak and was left out.
 *
 * Set for every command (the daemon too). Not set when the user gave node that flag (or its `--no-` form) on the
 * command line or in NODE_OPTIONS, nor with BOXSYNC_V8_HEAP=default in the environment.
 */
import { setFlagsFromString } from 'node:v8';

export const HEAP_FLAGS: readonly string[] = ['--optimize-for-size'];

/** A node flag of the user's own on the same matter. */
const OWN_FLAGS = /--(?:no[-_])?optimize[-_]for[-_]size\b/;

/** Whether boxsync sets HEAP_FLAGS for a process started with these node arguments and this environment. */
export function heapFlagsWanted(execArgv: readonly string[], env: NodeJS.ProcessEnv): boolean {
  if (env.BOXSYNC_V8_HEAP === 'default') return false;
  return !OWN_FLAGS.test([...execArgv, env.NODE_OPTIONS ?? ''].join(' '));
}

/** Set HEAP_FLAGS unless heapFlagsWanted says no; true when set. */
export function applyHeapFlags(execArgv: readonly string[] = process.execArgv, env: NodeJS.ProcessEnv = process.env): boolean {
  if (!heapFlagsWanted(execArgv, env)) return false;
  for (const flag of HEAP_FLAGS) setFlagsFromString(flag);
  return true;
}
