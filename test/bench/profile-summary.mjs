/**
 * `node test/bench/profile-summary.mjs FILE.cpuprofile [TOP]`: where a V8 CPU profile's main-thread time went:
 * busy and idle seconds, garbage collection, self time by source file, inclusive time by function (top N), and
 * the busy share of each second of the run (to see the main thread waiting, e.g. for an archive).
 */
import { readFileSync } from 'node:fs';

const p = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const top = Number(process.argv[3] ?? 25);
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const dt = p.timeDeltas;
const short = (url) => url.replace(/^file:\/\//, '').split('/').slice(-2).join('/') || '(native)';
const self = new Map();
const incl = new Map();
const perSec = [];
let t = 0;
let idle = 0;
let busy = 0;
let gc = 0;
for (let i = 0; i < p.samples.length; i++) {
  const us = dt[i + 1] ?? 0;
  t += dt[i] ?? 0;
  const n = byId.get(p.samples[i]);
  const name = n.callFrame.functionName;
  const sec = Math.floor(t / 1e6);
  perSec[sec] ??= [0, 0];
  if (name === '(idle)') {
    idle += us;
    perSec[sec][1] += us;
    continue;
  }
  busy += us;
  perSec[sec][0] += us;
  if (name === '(garbage collector)') gc += us;
  const f = name === '(program)' || name === '(garbage collector)' ? name : short(n.callFrame.url);
  self.set(f, (self.get(f) ?? 0) + us);
  const seen = new Set();
  for (let x = p.samples[i]; x !== undefined; x = parent.get(x)) {
    const cf = byId.get(x).callFrame;
    const k = `${cf.functionName || '(anon)'} ${short(cf.url)}:${cf.lineNumber + 1}`;
    if (seen.has(k)) continue;
    seen.add(k);
    incl.set(k, (incl.get(k) ?? 0) + us);
  }
}
const s = (us) => (us / 1e6).toFixed(2);
console.log(`busy ${s(busy)} s, idle ${s(idle)} s, garbage collection ${s(gc)} s`);
console.log('\nself time by file:');
for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${s(v)}  ${k}`);
console.log('\ninclusive time by function:');
for (const [k, v] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${s(v)}  ${k}`);
console.log('\nbusy share by second:', perSec.map(([b, i]) => Math.round((100 * b) / Math.max(1, b + i))).join(' '));
