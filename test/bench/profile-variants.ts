/**
 * `node --max-old-space-size=8192 --import tsx test/bench/profile-variants.ts FILES ROUNDS ENTRY...` (issue 29 point
 * 7): builds the synced fixture of FILES files once (journal-fixture.ts), then for ROUNDS rounds runs every ENTRY in
 * turn (the order reversed every other round, so load drift hits each alike): a no-change `sync --once`, then 100
 * files changed on Box and 100 in the mirror (edits.ts) and a timed `sync --once` that syncs them. Each run a child
 * `node ENTRY sync --once` under `/usr/bin/time -v` (wall, CPU seconds, peak RSS). An ENTRY is a build's
 * `bin/boxsync.js` (which runs `dist/cli-script/main.cjs` with its code cache), or a script that imports one (another
 * tree's build, or the same with V8 flags set by `v8.setFlagsFromString` first, or an environment variable set). Prints each run, then each entry's medians. With
 * PROFILE=1 the edit runs are under `--cpu-prof` (profiles in /tmp/boxsync-variants-prof).
 */
import { mkdir } from 'node:fs/promises';
import { startBoxServer } from '../../src/box-server/index.js';
import { makeTempDir } from '../support/tmp.js';
import { buildSyncedFixture } from './journal-fixture.js';
import { editBothSides } from './edits.js';
import { measureCommand } from './sync.bench.js';
const files = Number(process.argv[2] ?? 100_000);
const rounds = Number(process.argv[3] ?? 3);
const variants = process.argv.slice(4);
const TOKEN = 'PROF';
const tmp = await makeTempDir('boxsync-variants-');
const srv = await startBoxServer({ port: 0, tokens: [TOKEN] });
const res: Record<string, { nc: number[][]; ed: number[][] }> = {};
try {
  const fx = await buildSyncedFixture({ srv, token: TOKEN, dir: tmp.dir, files });
  let edited = 0;
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? variants : [...variants].reverse();
    for (const v of order) {
      res[v] ??= { nc: [], ed: [] };
      const prof = process.env.PROFILE === '1' ? ['--cpu-prof', `--cpu-prof-dir=/tmp/boxsync-variants-prof`, `--cpu-prof-name=${v.split('/').pop()}-${r}.cpuprofile`] : [];
      const nc = await measureCommand([process.execPath, v, 'sync', '--once', '--config', fx.configFile]);
      await editBothSides(srv, fx.boxFolderId, fx.mirror, 100, edited++);
      const ed = await measureCommand([process.execPath, ...prof, v, 'sync', '--once', '--config', fx.configFile]);
      if (ed.code !== 0 || !/100 downloaded.*100 uploaded/.test(ed.summary)) console.log(`${v}: ${ed.summary}`);
      res[v].nc.push([nc.wallMs / 1000, nc.cpuSeconds ?? NaN]);
      res[v].ed.push([ed.wallMs / 1000, ed.cpuSeconds ?? NaN]);
      console.log(`r${r} ${v}: nochange ${(nc.wallMs / 1000).toFixed(2)} s wall ${nc.cpuSeconds?.toFixed(2)} CPU | edits ${(ed.wallMs / 1000).toFixed(2)} s wall ${ed.cpuSeconds?.toFixed(2)} CPU ${Math.round((ed.peakRssKiB ?? 0) / 1024)} MiB`);
    }
  }
  const med = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]!; };
  for (const [v, { nc, ed }] of Object.entries(res)) {
    console.log(`MEDIAN ${v}: nochange ${med(nc.map((x) => x[0]!)).toFixed(2)} wall ${med(nc.map((x) => x[1]!)).toFixed(2)} CPU | edits ${med(ed.map((x) => x[0]!)).toFixed(2)} wall ${med(ed.map((x) => x[1]!)).toFixed(2)} CPU`);
  }
} finally {
  await srv.close();
  await tmp.cleanup();
}
