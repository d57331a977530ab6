/**
 * `node --import tsx test/bench/rss-mirror.ts [FILES] [FOLDERS] [BYTES] [ROUNDS]` (issue 29 point 5): seeds box-server
 * (in this process) once with FILES files of BYTES in all in FOLDERS folders, then runs first mirrors by
 * `node [FLAGS] bin/boxsync.js sync --once` (the compiled CLI when dist/ is built, as the bench runs it) into a fresh
 * mirror and state folder each, ROUNDS rounds of every variant back to back (interleaved, so load drift hits every
 * variant alike), each under `/usr/bin/time -v`: peak RSS (its Maximum resident set size) and CPU seconds.
 * RSS_VARIANTS is a JSON list of `{ "name", "node"?: [flags], "env"?: {..}, "config"?: {..} }` (default: one
 * variant, the default launch). Prints each run, then each variant's median and range. The README's before/after:
 * RSS_VARIANTS='[{"name":"before","env":{"BOXSYNC_V8_HEAP":"default"}},{"name":"after"}]', at 200 4 40000000 and
 * 20000 400 2097152. Where a peak's memory is: add `"node": ["--import", "<repo>/test/bench/rss-probe.mjs"]` to a variant
 * and set RSS_PROBE_OUT to a folder (rss-probe.mjs).
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { writeBoxConfig } from '../support/box-config.js';
import { repoRoot } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';
import { seedTree } from './seed-tree.js';
import { measureCommand } from './sync.bench.js';

interface Variant {
  readonly name: string;
  readonly node?: readonly string[];
  readonly env?: Record<string, string>;
  readonly config?: Record<string, unknown>;
}

const files = Number(process.argv[2] ?? 2000);
const folders = Number(process.argv[3] ?? 40);
const bytes = Number(process.argv[4] ?? files * 128);
const rounds = Number(process.argv[5] ?? 3);
const variants: Variant[] = process.env.RSS_VARIANTS ? (JSON.parse(process.env.RSS_VARIANTS) as Variant[]) : [{ name: 'default' }];
const tmp = await makeTempDir('boxsync-rss-');
const { srv, rootId } = await seedTree({ files, folders, bytes, name: 'Rss', token: 'RSS' });
const results = new Map<string, { rss: number[]; cpu: number[]; wall: number[] }>(variants.map((v) => [v.name, { rss: [], cpu: [], wall: [] }]));
let n = 0;
for (let r = 0; r < rounds; r++) {
  for (const v of variants) {
    const dir = join(tmp.dir, `run-${n++}`);
    await mkdir(dir);
    const configFile = join(dir, 'config.json');
    await writeBoxConfig(configFile, { srv, token: 'RSS', remoteId: rootId, localPath: join(dir, 'mirror'), stateDir: join(dir, 'state'), socketPath: join(dir, 'c.sock'), extra: { rateLimit: undefined, ...v.config } });
    const m = await measureCommand([process.execPath, ...(v.node ?? []), join(repoRoot, 'bin', 'boxsync.js'), 'sync', '--once', '--config', configFile], v.env ?? {});
    if (m.code !== 0) throw new Error(`${v.name}: exit ${m.code}: ${m.summary}`);
    const rec = results.get(v.name)!;
    rec.rss.push((m.peakRssKiB ?? NaN) / 1024);
    rec.cpu.push(m.cpuSeconds ?? NaN);
    rec.wall.push(m.wallMs / 1000);
    console.log(`round ${r + 1} ${v.name}: peak RSS ${((m.peakRssKiB ?? NaN) / 1024).toFixed(0)} MiB, CPU ${m.cpuSeconds?.toFixed(2)} s, wall ${(m.wallMs / 1000).toFixed(2)} s`);
  }
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const range = (xs: number[], d: number): string => `${Math.min(...xs).toFixed(d)}-${Math.max(...xs).toFixed(d)}`;
console.log(`\n${files} files / ${folders} folders / ${bytes} bytes, ${rounds} rounds:`);
for (const [name, rec] of results) {
  console.log(`${name}: peak RSS median ${median(rec.rss).toFixed(0)} MiB (${range(rec.rss, 0)}), CPU median ${median(rec.cpu).toFixed(2)} s (${range(rec.cpu, 2)}), wall median ${median(rec.wall).toFixed(2)} s`);
}
await srv.close();
await tmp.cleanup();
