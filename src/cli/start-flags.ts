/**
 * V8's flags put back to what they were when the process started, for a V8 code cache made at the end of a run
 * (bin/code-cache.js, through script-main.ts). V8 stamps a code cache with a hash of every flag's value when it is
 * made, and rejects it in a process whose flags differ: the CLI sets flags of its own as it starts (heap-flags.ts,
 * tier-flags.ts) and a file worker sets --expose-gc (local/worker-gc.ts), all after the bundle was compiled with the
 * process's start flags, so a cache made with them in force would never be used. test/cli/code-cache.test.ts shows
 * a second run using the cache.
 *
 * Only at the end of a run: the flags boxsync set go back to V8's defaults (never those the user gave node).
 */
import { setFlagsFromString } from 'node:v8';
import { heapFlagsWanted, relaxHeapFlags } from './heap-flags.js';
import { DEFAULT_TIER_FLAGS, tierFlagsWanted } from './tier-flags.js';

const OWN_EXPOSE_GC = /--expose[-_]gc\b/;
const OWN_MAX_SEMI_SPACE = /--max[-_]semi[-_]space[-_]size\b/;

export function restoreStartFlags(execArgv: readonly string[] = process.execArgv, env: NodeJS.ProcessEnv = process.env): void {
  const own = [...execArgv, env.NODE_OPTIONS ?? ''].join(' ');
  const heap = heapFlagsWanted(execArgv, env);
  relaxHeapFlags();
  // --optimize-for-size also set --max-semi-space-size=1 (V8's implication), which --no-optimize-for-size leaves.
  if (heap.includes('--optimize-for-size') && !OWN_MAX_SEMI_SPACE.test(own)) setFlagsFromString('--max-semi-space-size=0');
  if (tierFlagsWanted(execArgv, env)) DEFAULT_TIER_FLAGS.forEach((flag) => setFlagsFromString(flag));
  if (!OWN_EXPOSE_GC.test(own)) setFlagsFromString('--no-expose-gc');
}
