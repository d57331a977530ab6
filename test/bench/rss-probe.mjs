/**
 * `node --import ./test/bench/rss-probe.mjs ...` (issue 29 point 5; a variant's `node` flags in test/bench/rss-mirror.ts):
 * samples the main thread every 100 ms (/proc/self/status, process.memoryUsage(), V8's heap spaces) and, as the
 * process exits, writes to $RSS_PROBE_OUT/<pid>.json the sample taken at its highest RSS, /proc/self/smaps summed by
 * kind near that peak, and one line a second of the run: where a peak's memory is. Not loaded in worker threads.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import v8 from 'node:v8';
import { isMainThread } from 'node:worker_threads';

const out = process.env.RSS_PROBE_OUT;
let peak = null;
/** One line a second: ms, VmRSS, RssAnon, heapUsed, heapTotal (KiB). */
const series = [];
let lastSeries = 0;
// RSS_PROBE_SNAPSHOT_MIB=N: one heap snapshot (into $RSS_PROBE_OUT) the first time V8's used heap passes N MiB.
const snapAt = Number(process.env.RSS_PROBE_SNAPSHOT_MIB ?? NaN);
// RSS_PROBE_SNAPSHOT_MS=N: or the first time N ms have passed.
const snapAtMs = Number(process.env.RSS_PROBE_SNAPSHOT_MS ?? NaN);
let snapped = false;
const kib = (s, name) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(s)?.[1] ?? NaN);
// /proc/self/smaps at a peak, summed: the [heap] (malloc's main arena), anonymous mappings by size (malloc's other
// arenas reserve 64 MiB each; V8's pages are 256 KiB), and file-backed ones by file.
const smaps = () => {
  const sum = {};
  let key = null;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const m = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (m) {
      const size = (parseInt(m[2], 16) - parseInt(m[1], 16)) / 1024;
      const path = m[3];
      key = path === '' ? (size >= 60 * 1024 ? 'anon >=60MiB (malloc arena)' : size >= 8 * 1024 ? 'anon 8-60MiB' : size >= 1024 ? 'anon 1-8MiB' : 'anon <1MiB') : path.startsWith('/') ? path.split('/').pop() : path;
      continue;
    }
    const r = /^Rss:\s+(\d+) kB/.exec(line);
    if (r && key !== null) sum[key] = (sum[key] ?? 0) + Number(r[1]);
  }
  return Object.fromEntries(Object.entries(sum).filter(([, v]) => v >= 512).sort((a, b) => b[1] - a[1]));
};
let smapsAt = 0;
let peakSmaps = null;
const sample = () => {
  const st = readFileSync('/proc/self/status', 'utf8');
  const rss = kib(st, 'VmRSS');
  const now = performance.now();
  if (now - lastSeries >= 1000) {
    lastSeries = now;
    const m = process.memoryUsage();
    series.push([Math.round(now), rss, kib(st, 'RssAnon'), Math.round(m.heapUsed / 1024), Math.round(m.heapTotal / 1024)]);
    if (!snapped && (m.heapUsed / 1048576 > snapAt || now > snapAtMs) && out) {
      snapped = true;
      v8.writeHeapSnapshot(join(out, `${process.pid}.heapsnapshot`));
    }
  }
  if (peak !== null && rss <= peak.rssKiB) return;
  const mu = process.memoryUsage();
  const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, Math.round(s.space_size / 1024)]));
  peak = { rssKiB: rss, anonKiB: kib(st, 'RssAnon'), fileKiB: kib(st, 'RssFile'), threads: Number(/Threads:\s+(\d+)/.exec(st)?.[1]), heapTotalKiB: Math.round(mu.heapTotal / 1024), heapUsedKiB: Math.round(mu.heapUsed / 1024), externalKiB: Math.round(mu.external / 1024), arrayBuffersKiB: Math.round(mu.arrayBuffers / 1024), spacesKiB: spaces, atMs: Math.round(performance.now()) };
  if (rss > smapsAt + 1024) {
    smapsAt = rss;
    peakSmaps = { rssKiB: rss, ...smaps() };
  }
};
if (isMainThread) {
const timer = setInterval(sample, 100);
timer.unref();
process.on('exit', () => {
  sample();
  if (out) writeFileSync(join(out, `${process.pid}.json`), JSON.stringify({ peak, smaps: peakSmaps, series }));
});
}
