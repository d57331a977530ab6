#!/usr/bin/env node
// Entry point. Runs the compiled CLI (dist/, what an installed package ships) when it exists; in a development
// checkout without a build, the TypeScript sources through tsx (a devDependency). BOXSYNC_FROM_SOURCE=1 forces
// the sources even when dist/ exists (a stale build would otherwise hide source edits).
import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';
import { ARENA_MAX, mallocTuningWanted } from './malloc-rule.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// BOXSYNC_PHASES=1: when each part of the run was reached, in ms since the process started (process.uptime), as one
// line on stderr at exit (`boxsync: phases: ...`): where a short run's fixed cost goes (test/bench/startup-runs.ts
// STARTUP_PHASES=1; README, Performance). The parts mark themselves through src/cli/phases.ts.
if (process.env.BOXSYNC_PHASES === '1') {
  const marks = [['entry', process.uptime() * 1000]];
  globalThis[Symbol.for('boxsync.phases')] = marks;
  process.once('exit', () => {
    marks.push(['exit', process.uptime() * 1000]);
    process.stderr.write(`boxsync: phases: ${marks.map(([name, ms]) => `${name} ${ms.toFixed(1)}`).join(', ')}\n`);
  });
}
// glibc malloc: at most 2 arenas, set before Node's other threads allocate (the rule: bin/malloc-rule.js, shared with
// src/cli/malloc-native.ts, which says why; main.ts applies it again, with the rest of the tuning). Without the
// addon, malloc's defaults.
const env = process.env;
if (process.platform === 'linux' && mallocTuningWanted(env)) {
  try {
    const malloc = createRequire(import.meta.url)(env.BOXSYNC_MALLOC_ADDON || join(root, 'build', 'Release', 'boxsync_malloc.node'));
    malloc.mallopt(malloc.M_ARENA_MAX, ARENA_MAX);
  } catch {
    // not built, not glibc: nothing changes
  }
}
const compiled = join(root, 'dist', 'cli', 'main.js');
// `boxsync sync` runs the build's one-script bundle of the same code (scripts/bundle-cli.mjs) with a V8 code cache
// (./code-cache.js: compiled code of an earlier run, so that a run compiles little), unless the bundle is older
// than dist/cli/main.js (a build left half done).
const script = join(root, 'dist', 'cli-script', 'main.cjs');
// `boxsync sync --once` runs the small script ./hand-off.cjs first (src/cli/hand-off-first.ts): when a daemon holds
// the state dir it hands the run over, and the bundle is never read; otherwise it changes nothing and the bundle runs.
const handOff = join(root, 'dist', 'cli-script', 'hand-off.cjs');
const args = process.argv.slice(2);
const isSync = args.find((a) => !a.startsWith('-')) === 'sync';
const fresh = (file) => existsSync(file) && statSync(file).mtimeMs >= statSync(compiled).mtimeMs;
if (existsSync(compiled) && !process.env.BOXSYNC_FROM_SOURCE) {
  const { runCachedScript, runHandOffScript } = isSync && fresh(script) ? await import('./code-cache.js') : {};
  if (runCachedScript === undefined) {
    await import(pathToFileURL(compiled).href);
  } else if (!(args.includes('--once') && fresh(handOff) && (await runHandOffScript(handOff)))) {
    await runCachedScript(script);
  }
} else {
  let register;
  try {
    ({ register } = await import('tsx/esm/api'));
  } catch {
    process.stderr.write(`boxsync: no build in ${join(root, 'dist')} and no TypeScript loader (tsx) to run the sources; run \`npm ci && npm run build\` in ${root}\n`);
    process.exit(2);
  }
  register();
  await import(pathToFileURL(join(root, 'src', 'cli', 'main.ts')).href);
}
