/**
 * The entry of the CommonJS bundle of `boxsync sync` (scripts/bundle-cli.mjs: dist/cli-script/main.cjs), which
 * bin/boxsync.js compiles as one script with a V8 code cache (bin/code-cache.js). The same modules, in the same
 * order, as main.ts; a script has no top-level await, so the run is handed back as `done`, after which the loader
 * writes the cache.
 */
import './heap-tuning.js';
import { runCli } from './run-cli.js';

export const done: Promise<void> = runCli(process.argv);
export { restoreStartFlags } from './start-flags.js';
