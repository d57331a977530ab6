// Part of `npm run build`: bundles the compiled CLI (dist/cli/main.js and the modules it imports, ours and the
// pure-JavaScript dependencies) into dist/cli-bundle/: main.js, and one chunk per group of modules that a command
// loads lazily (esbuild's splitting), so that `boxsync sync` loads about 50 files instead of 340. bin/boxsync.js runs
// it for `boxsync sync`. Node 20 has no compile cache for ES modules: a `sync --once` spent about 0.3 s of its CPU
// loading modules one by one; bundled, a run after 100 + 100 edits on 100,000 files took 0.35 s less CPU (README,
// Performance). Left outside: better-sqlite3 (a native addon) and pino with its transports (pino starts worker
// threads from its own files). dist/cli-bundle/ is as deep as dist/cli/, so that a path taken from import.meta.url
// there (the version's ../../package.json) still resolves; the commands that read files beside their own module
// (service, the daemon's web page) run from dist/cli/main.js as before, so the bundle is for `sync` only.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lazyHttp2Wrapper } from './bundle-plugins.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'dist', 'cli-bundle');
// Chunks are named by their content: those of an earlier build would stay beside the new ones.
rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: [join(root, 'dist', 'cli', 'main.js')],
  outdir,
  entryNames: '[name]',
  chunkNames: 'chunk-[hash]',
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['better-sqlite3', 'pino', 'pino-pretty', 'thread-stream'],
  // The CommonJS dependencies inside call require(); an ES module has none of its own.
  banner: { js: "import { createRequire as __boxsyncRequire } from 'node:module'; const require = __boxsyncRequire(import.meta.url);" },
  logLevel: 'warning',
  // http2-wrapper (and node:http2) loaded on first use, not when got loads (scripts/bundle-plugins.mjs).
  plugins: [lazyHttp2Wrapper],
});
process.stdout.write(`CLI bundled for \`boxsync sync\`: ${join(outdir, 'main.js')} and its chunks\n`);
