/**
 * `node --max-old-space-size=8192 --import tsx test/bench/profile-journal.ts [FILES] [PHASES]`: builds the synced
 * fixture of FILES files (journal-fixture.ts) and runs `boxsync sync --once` on it, one child per phase, each
 * measured by `/usr/bin/time -v` (wall, peak RSS, CPU): `nochange` (the clean mark set: plans what changed),
 * `whole` (the clean marks cleared: every window planned), `edits` (100 files changed on Box and 100 in the mirror,
 * as compare.bench.ts's edit row, then the run). PHASES is a comma list (default nochange,whole,edits,nochange).
 * CLI_JS_B, a second build's main.js: every phase but `edits` runs it too, right after the first (before and after
 * under the same load); `editsB` is the edits run by it alone.
 * With PROFILE=1 each run is under `node --cpu-prof` (profiles in $PROFILE_DIR, default /tmp/boxsync-prof). Runs
 * the build through bin/boxsync.js when dist/ exists (for `sync`, its bundle; or $CLI_JS, a compiled main.js or a
 * bundle elsewhere), else the sources through tsx.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startBoxServer } from '../../src/box-server/index.js';
import { repoRoot } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';
import { buildSyncedFixture } from './journal-fixture.js';
import { editBothSides } from './edits.js';
import { measureCommand } from './sync.bench.js';

function clearCleanMarks(journalFile: string): void {
  const db = new Database(journalFile);
  db.prepare(`DELETE FROM meta WHERE key LIKE 'clean:%'`).run();
  db.close();
}

const files = Number(process.argv[2] ?? 100_000);
const phases = (process.argv[3] ?? 'nochange,whole,edits,nochange').split(',');
const profDir = process.env.PROFILE_DIR ?? '/tmp/boxsync-prof';
await mkdir(profDir, { recursive: true });
const TOKEN = 'PROF';
const tmp = await makeTempDir('boxsync-profj-');
const srv = await startBoxServer({ port: 0, tokens: [TOKEN] });
try {
  const t0 = performance.now();
  const fx = await buildSyncedFixture({ srv, token: TOKEN, dir: tmp.dir, files, progress: (n) => console.log(`  ${n} files after ${((performance.now() - t0) / 1000).toFixed(0)} s`) });
  console.log(`fixture of ${files} files in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const dist = join(repoRoot, 'dist', 'cli', 'main.js');
  // With a build, bin/boxsync.js: what a user runs (for `sync`, the build's bundle).
  const entry = process.env.CLI_JS ? [process.env.CLI_JS] : existsSync(dist) ? [join(repoRoot, 'bin', 'boxsync.js')] : ['--import', 'tsx', join(repoRoot, 'src', 'cli', 'main.ts')];
  let edited = 0;
  for (const [i, phase] of phases.entries()) {
    if (phase === 'whole') clearCleanMarks(fx.journalFile);
    if (phase.startsWith('edits')) await editBothSides(srv, fx.boxFolderId, fx.mirror, 100, edited++);
    // CLI_JS_B: a second build, run right after the first on the same tree (before/after under the same load).
    // `editsB`: the edits, then the run by CLI_JS_B alone.
    const runs = phase === 'editsB' ? [[' (B)', [process.env.CLI_JS_B ?? entry[0]!]] as const] : [['', entry] as const, ...(process.env.CLI_JS_B && phase !== 'edits' ? [[' (B)', [process.env.CLI_JS_B]] as const] : [])];
    for (const [label, cli] of runs) {
      if (label !== '' && phase === 'whole') clearCleanMarks(fx.journalFile);
      const prof = process.env.PROFILE === '1' ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`, `--cpu-prof-name=${i}-${phase}${label === '' ? '' : '-b'}.cpuprofile`] : [];
      const m = await measureCommand([process.execPath, ...prof, ...cli, 'sync', '--once', '--config', fx.configFile]);
      console.log(`${phase}${label}: exit ${m.code}, ${(m.wallMs / 1000).toFixed(2)} s wall, ${m.cpuSeconds?.toFixed(2)} s CPU, ${Math.round((m.peakRssKiB ?? 0) / 1024)} MiB peak: ${m.summary}`);
      if (m.phases != null) console.log(`  phases: ${m.phases}`);
    }
  }
} finally {
  await srv.close();
  await tmp.cleanup();
}
