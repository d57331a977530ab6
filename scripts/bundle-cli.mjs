// Part of `npm run build`: bundles the compiled CLI (dist/cli/script-main.js and the modules it imports, ours and the
// pure-JavaScript dependencies) into one CommonJS script, dist/cli-script/main.cjs, which bin/boxsync.js runs for
// `boxsync sync` with a V8 code cache (bin/code-cache.js). Node 20 has no compile cache of its own: a `sync --once`
// spent about 0.3 s of its CPU loading 340 modules one by one, and bundled, still compiled them on the main
// thread each run: with the code cache of an earlier run a run takes about 0.06 s less CPU (README, Performance). One script, not ES
// modules: V8 can cache a script's code (vm.Script), and Node 20 has no such hook for ES modules; a script has no
// top-level await, hence script-main.ts, which hands the run back as `done`. Every dynamic import() of a bundled
// module becomes a lazy init of its code inside the script, so that a module a command does not use is compiled but
// never run (and with the code cache, not even compiled). better-sqlite3's JavaScript is inside, its native addon
// found by src/journal/sqlite-addon.ts (loading its dozen modules from node_modules cost a run 3-5 ms of CPU under
// load). Left outside: `bindings` (better-sqlite3's way to find its addon, asked only when that found none), pino's
// transports (pino-pretty and thread-stream, whose worker threads start from their own files; `sync` uses none),
// esbuild and tsx (development only). pino itself is inside: loaded from node_modules it cost 13-15 ms of CPU a run.
// dist/cli-script/ is as deep as dist/cli/, so that a path taken from import.meta.url there (the version's
// ../../package.json, the native addons' ../../build/Release) still resolves; the commands that read files beside
// their own module (service, the daemon's web page) run from dist/cli/main.js as before, so the bundle is for `sync`
// only. The script is one function expression (a module wrapper, as Node's CommonJS loader makes): run it through
// bin/boxsync.js.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { asciiOnly, cliScriptOptions } from './bundle-plugins.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'dist', 'cli-script');
// The ES-module bundle of earlier builds (dist/cli-bundle/), if any, goes too: nothing runs it any more.
for (const dir of [outdir, join(root, 'dist', 'cli-bundle')]) rmSync(dir, { recursive: true, force: true });
// The options (scripts/bundle-plugins.mjs, shared with the tests): a CommonJS script inside a wrapper function;
// bindings, pino's transports, esbuild and tsx left outside; import.meta.url of the modules is the script's
// own URL, as the ES modules' was (a script has none); import() of node's own modules and of the external ones
// becomes require(), which a vm.Script has (import() would need a hook); http2-wrapper (and node:http2) loaded on
// first use, not when got loads, and so are got's two Intl.ListFormat objects (ICU's start).
await build(cliScriptOptions(join(root, 'dist', 'cli', 'script-main.js'), join(outdir, 'main.cjs')));
// ASCII only, so that bin/code-cache.js reads it into a one-byte string (scripts/bundle-plugins.mjs).
asciiOnly(join(outdir, 'main.cjs'));
process.stdout.write(`CLI bundled for \`boxsync sync\`: ${join(outdir, 'main.cjs')}\n`);
// The small script bin/boxsync.js runs first for `sync --once` (src/cli/hand-off-first.ts): a run handed to a running
// daemon never reads the bundle above. The same options; it must stay small (no config schema, no engine): a run
// with no daemon reads and compiles it too. test/cli/hand-off-first.test.ts checks what it holds.
await build(cliScriptOptions(join(root, 'dist', 'cli', 'hand-off-main.js'), join(outdir, 'hand-off.cjs')));
asciiOnly(join(outdir, 'hand-off.cjs'));
process.stdout.write(`hand-off script for \`boxsync sync --once\` with a daemon running: ${join(outdir, 'hand-off.cjs')}\n`);
