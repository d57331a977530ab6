/**
 * `npm run soak -- --scenarios N --seed S [--per-world M] [--big-files] [--item-faults] [--verbose]`: the simulation of simulation.test.ts
 * outside vitest, for as long as you like. Worlds S, S+1, S+2, ... each run M scenarios (default 10) until N
 * scenarios ran. Every failing scenario prints its world seed, the world's operation log and both trees; the
 * exit code is 1 when any failed. `--seed S --per-world M --scenarios M` replays world S alone.
 * For a post-mortem: BOXSYNC_SIM_LOG_LEVEL=debug sets the children's log level (default warn),
 * BOXSYNC_SIM_TAIL=N prints the last N lines of each child's stderr (default 15), BOXSYNC_SIM_KEEP=1 keeps the
 * worlds' folders.
 */
import { runWorld, type WorldResult } from './sim.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isInteger(v) || v < 0) {
    process.stderr.write(`soak: --${name} expects a non-negative integer, got ${process.argv[i + 1]}\n`);
    process.exit(2);
  }
  return v;
}

const total = arg('scenarios', 100);
const seed = arg('seed', 1);
const perWorld = Math.max(1, arg('per-world', 10));
const bigFiles = process.argv.includes('--big-files');
const itemFaults = process.argv.includes('--item-faults');
const verbose = process.argv.includes('--verbose');

const t0 = Date.now();
const results: WorldResult[] = [];
let done = 0;
for (let s = seed; done < total; s++) {
  const n = Math.min(perWorld, total - done);
  const r = await runWorld(s, { scenarios: n, bigFiles, itemFaults, log: (line) => { if (verbose || line.startsWith('SIMULATION FAILURE')) process.stdout.write(`${line}\n`); } });
  results.push(r);
  done += n;
  process.stdout.write(
    `world ${s}: ${r.failure ? `FAILED at scenario ${r.failure.scenario}` : 'ok'}; ${r.scenariosRun} scenarios, ${r.killsSurvived} sync kills + ${r.daemonKillsSurvived} daemon kills survived, ${r.killsMissed} kill triggers missed, ${r.runs} runs, ${(r.ms / 1000).toFixed(1)} s\n`,
  );
}
const failed = results.filter((r) => r.failure);
const faults: Record<string, number> = {};
for (const r of results) for (const [k, v] of Object.entries(r.faults)) faults[k] = (faults[k] ?? 0) + v;
process.stdout.write(
  [
    `soak: ${results.reduce((s, r) => s + r.scenariosRun, 0)} scenarios in ${results.length} worlds, ${(Date.now() - t0) / 1000} s`,
    `  kill -9 survived: ${results.reduce((s, r) => s + r.killsSurvived, 0)} sync --once, ${results.reduce((s, r) => s + r.daemonKillsSurvived, 0)} daemon; triggers missed: ${results.reduce((s, r) => s + r.killsMissed, 0)}`,
    `  faults armed: ${Object.entries(faults).map(([k, v]) => `${k} x${v}`).join(', ') || 'none'}`,
    `  failing worlds: ${failed.map((r) => `${r.seed} (scenario ${r.failure!.scenario})`).join(', ') || 'none'}`,
  ].join('\n') + '\n',
);
process.exit(failed.length > 0 ? 1 : 0);
