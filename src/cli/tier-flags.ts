/**
 * V8's tier-up for boxsync's short runs (issue 29 point 7), set by the CLI as it starts (main.ts), as heap-flags.ts
 * sets the heap's.
 *
 * V8 sends a function to its optimizing compilers once it has used up an "interrupt budget" of bytecode run. A
 * `sync --once` over a mirror that changed little lives a second or two: much of what V8 optimizes in that time is
 * code that has already done most of its work (module setup, the walk's first folders), and the compiling runs on
 * background threads that take CPU from the main thread on a machine with few cores (perf: 15-19 % of such a run's
 * CPU). A budget four times V8's own lets only the code that stays hot reach the optimizer: 100 + 100 edits on
 * 100,000 files took 1.35-1.39 s of CPU against 1.52 s, and 1.39 against 1.43 s in another set (README,
 * Performance). A long run goes back to V8's own budget once the process has used SHORT_RUN_CPU_MS of CPU: in a
 * first mirror of 20,000 files the higher budget for the whole run measured 18.5 s of CPU against 16.8 s (medians of
 * five pairs under load, the pairs disagreeing), so only the short runs keep it.
 *
 * Not set when the user gave node that flag on the command line or in NODE_OPTIONS, nor with BOXSYNC_V8_TIER=default.
 */
import { setFlagsFromString } from 'node:v8';

export const TIER_FLAGS: readonly string[] = ['--interrupt-budget=270336'];
/** V8's own value (node 20's V8; `node --v8-options` lists it), set back once a run is not a short one. */
export const DEFAULT_TIER_FLAGS: readonly string[] = ['--interrupt-budget=67584'];
/** CPU (all threads, ms) past which a run is not a short one: a no-change or edit run at 100,000 files stays under. */
export const SHORT_RUN_CPU_MS = 2000;
const CPU_CHECK_EVERY_MS = 250;

/** A node flag of the user's own on the same matter. */
const OWN_FLAGS = /--interrupt[-_]budget\b/;

/** Whether boxsync sets TIER_FLAGS for a process started with these node arguments and this environment. */
export function tierFlagsWanted(execArgv: readonly string[], env: NodeJS.ProcessEnv): boolean {
  return env.BOXSYNC_V8_TIER !== 'default' && !OWN_FLAGS.test([...execArgv, env.NODE_OPTIONS ?? ''].join(' '));
}

/** Set TIER_FLAGS unless tierFlagsWanted says no, and DEFAULT_TIER_FLAGS once the run is long; true when set. */
export function applyTierFlags(execArgv: readonly string[] = process.execArgv, env: NodeJS.ProcessEnv = process.env): boolean {
  const wanted = tierFlagsWanted(execArgv, env);
  if (!wanted) return false;
  TIER_FLAGS.forEach((flag) => setFlagsFromString(flag));
  const timer = setInterval(() => {
    const { user, system } = process.cpuUsage();
    if ((user + system) / 1000 < SHORT_RUN_CPU_MS) return;
    clearInterval(timer);
    DEFAULT_TIER_FLAGS.forEach((flag) => setFlagsFromString(flag));
  }, CPU_CHECK_EVERY_MS);
  // Never what keeps the process alive.
  timer.unref();
  return true;
}
