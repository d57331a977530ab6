/**
 * V8 flags set at run time that a new worker thread puts back to V8's defaults as its isolate starts (seen on Node
 * 20 with `--semi-space-growth-factor`; V8's flags are the process's, shared by every thread): the CLI's heap sizing
 * (src/cli/heap-flags.ts) registers what it set here, and whoever starts a worker thread (file-workers.ts) runs
 * workerPrelude() first in the thread's code (the soonest after the reset) and reapplyAfterWorkerStart() when the
 * thread is online.
 */
import { setFlagsFromString } from 'node:v8';

let flags: readonly string[] = [];

/** The flags to set again after each worker start (heap-flags.ts). */
export function keepAfterWorkerStart(set: readonly string[]): void {
  flags = [...set];
}

export function reapplyAfterWorkerStart(): void {
  for (const flag of flags) setFlagsFromString(flag);
}

/** JavaScript to run first in a worker thread's code (`eval: true`): sets the flags again, from that thread. */
export function workerPrelude(): string {
  return flags.map((f) => `require('node:v8').setFlagsFromString(${JSON.stringify(f)});\n`).join('');
}
