/**
 * The seeded whole-system simulation in CI (issue 10 point 8): the real `boxsync` CLI against box-server over
 * HTTP, random operations on both sides, faults, and kill -9 of `sync --once` and of the daemon at chosen
 * requests; after every scenario the invariants of test/sim/invariants.ts, checked from the disk and box-server
 * only. test/sim/sim.ts describes a world and a scenario.
 *
 * Budget: WORLDS worlds of PER_WORLD scenarios (at least 100 scenarios and 50 kill points), about 2.5 minutes on
 * a 2-core machine. `npm run soak -- --scenarios N --seed S` runs more; a failing world prints its seed, its
 * operation log and both trees, and `npm run soak -- --seed S --scenarios M --per-world M` replays it.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkBadName, makeBadName } from './disk-faults.js';
import { checkInvariants, noteRequired, outsideFingerprint, scopeDeletes } from './invariants.js';
import { Contents } from './ops.js';
import { Rng } from './prng.js';
import { runWorld, type WorldResult } from './sim.js';
import { sha1Of } from './trees.js';
import { runChild, startWorld } from './world.js';
import { unprivilegedUser } from '../support/run-as.js';
import { loadConfig } from '../../src/config/index.js';
import { asRelPath } from '../../src/core/model.js';
import { openJournal } from '../../src/journal/index.js';

const FIRST_SEED = 1;
const WORLDS = 12;
const PER_WORLD = 10;

/**
 * World seeds that find a known boxsync bug not fixed yet: each is described in test/sim/known-failures.md
 * (invariant, operations, suspected cause). Only these exact seeds are skipped; remove a seed once its bug is
 * fixed, and it becomes a regression case.
 */
// World 8 found the daemon reading a case-only rename as a delete (fixed in engine/observe-local.ts restatLocal);
// it runs again as a regression case. See test/sim/known-failures.md.
const KNOWN_FAILURES: ReadonlySet<number> = new Set<number>([]);

const results: WorldResult[] = [];

describe('seeded whole-system simulation', () => {
  it('the invariant checks catch a broken world (a self-test of the oracle)', async () => {
    const w = await startWorld({ transferConcurrency: 2 });
    try {
      const written = new Map<string, string>();
      const required = new Map<string, string>();
      written.set(sha1Of('A\n'), 'a.txt');
      await writeFile(join(w.mirror, 'a.txt'), 'A\n');
      const outsideBefore = await outsideFingerprint(w);
      await noteRequired(w, required, 'start');
      const r = await runChild(w, ['sync', '--once']);
      expect(r.code, r.stderr).toBe(0);
      expect((await checkInvariants(w, { required, written, outsideBefore })).failures).toEqual([]);

      await writeFile(join(w.mirror, 'only-local.txt'), 'L\n');
      await writeFile(join(w.mirror, '.boxsync-tmp-0123456789abcdef'), 'half a down');
      required.set(sha1Of('lost\n'), 'the test');
      await writeFile(join(w.home, 'config', 'stray'), 'x');
      const broken = (await checkInvariants(w, { required, written, outsideBefore })).failures;
      expect(broken.some((f) => f.startsWith('(a) only-local.txt is in the mirror but not on Box'))).toBe(true);
      expect(broken.some((f) => f.startsWith('(b) content'))).toBe(true);
      expect(broken.some((f) => f.startsWith('(c) boxsync temp file left'))).toBe(true);
      expect(broken.some((f) => f.startsWith('(c) mirror only-local.txt holds a content nobody wrote'))).toBe(true);
      expect(broken.some((f) => f.startsWith('(d) something outside'))).toBe(true);
      // (f): a trash at or below the path whose scope changed, in a run's output or its requests.
      const run = { stderr: 'remote-trash         Docs/a.txt  (deleted here)\nlocal-trash          other.txt  (gone on Box)\n', requests: [] };
      expect(scopeDeletes('docs', [run], new Map())).toEqual(['(f) run 1 after the scope change of /docs: remote-trash Docs/a.txt']);
      const del = { method: 'DELETE', path: '/2.0/folders/77', query: '', status: 204, atMs: 0, headers: {} };
      expect(scopeDeletes('docs', [{ stderr: '', requests: [del] }], new Map([['77', 'docs']]))).toHaveLength(1);
      // A name that is not UTF-8: an (a) failure unless the simulation made it on purpose; then a run that ended
      // without reporting it parked, or its upload, is a failure of its own (test/sim/disk-faults.ts).
      const bad = await makeBadName(w, new Rng(7), new Contents('self-test'));
      written.set(sha1Of(bad.data), 'the bad name');
      const undecodable = (parked: Set<string>) => checkInvariants(w, { required, written, outsideBefore, parked });
      expect((await undecodable(new Set())).failures.some((f) => f.startsWith('(a) a name that is not UTF-8 in the mirror'))).toBe(true);
      expect((await undecodable(new Set([bad.decoded]))).failures.some((f) => f.includes('not UTF-8'))).toBe(false);
      const silent = { ...r, stderr: '' };
      expect(await checkBadName(w, bad, [silent])).toEqual([expect.stringMatching(/^\(bad name\) run 1 \(exit 0\) did not report/)]);
      // (g): the journal forgets a.txt's merge base (no failure row, nothing would plan it).
      const { journal } = openJournal(join(w.stateDir, 'journal.db'));
      const root = (await loadConfig({ path: w.configFile, env: w.env })).folders[0]!;
      journal.deleteSynced(root.id, asRelPath('a.txt'));
      journal.close();
      const forgotten = (await checkInvariants(w, { required, written, outsideBefore })).failures;
      expect(forgotten.some((f) => f.startsWith('(g) a.txt: out of sync in the journal (new locally)'))).toBe(true);
    } finally {
      await w.close();
    }
  });

  for (let seed = FIRST_SEED; seed < FIRST_SEED + WORLDS; seed++) {
    const test = KNOWN_FAILURES.has(seed) ? it.skip : it;
    test(
      `world ${seed}: ${PER_WORLD} scenarios, every invariant after each`,
      async () => {
        const r = await runWorld(seed, {
          scenarios: PER_WORLD,
          log: (line) => {
            if (line.startsWith('SIMULATION FAILURE')) process.stderr.write(`${line}\n`);
          },
        });
        results.push(r);
        expect(r.failure?.report ?? null, r.failure?.report).toBeNull();
      },
      180_000,
    );
  }

  it('ran the whole budget: at least 100 scenarios and 50 kill points survived', () => {
    const scenarios = results.reduce((s, r) => s + r.scenariosRun, 0);
    const kills = results.reduce((s, r) => s + r.killsSurvived + r.daemonKillsSurvived, 0);
    expect(scenarios).toBeGreaterThanOrEqual(100);
    expect(kills).toBeGreaterThanOrEqual(50);
    // Every local-disk fault of test/sim/disk-faults.ts ran (drawn from their own stream, fixed by the seeds).
    const disk = new Set(results.flatMap((r) => Object.keys(r.faults)).filter((k) => k.startsWith('disk: ')));
    // The unreadable entry needs a user the CLI can run as (run-as.ts); where there is none it is not drawn.
    const unreadable = 'as' in unprivilegedUser() ? ['disk: unreadable entry'] : [];
    expect([...disk].sort()).toEqual(
      ['disk: bad name', 'disk: deep chain', 'disk: token revoked', ...unreadable, 'disk: unmounted root', 'disk: upload change'].sort(),
    );
  });
});

afterAll(() => {
  const faults: Record<string, number> = {};
  for (const r of results) for (const [k, v] of Object.entries(r.faults)) faults[k] = (faults[k] ?? 0) + v;
  process.stdout.write(
    `simulation: ${results.reduce((s, r) => s + r.scenariosRun, 0)} scenarios in ${results.length} worlds; kill -9 survived: ` +
      `${results.reduce((s, r) => s + r.killsSurvived, 0)} sync --once + ${results.reduce((s, r) => s + r.daemonKillsSurvived, 0)} daemon ` +
      `(${results.reduce((s, r) => s + r.killsMissed, 0)} triggers missed); scope changes without a delete: ${results.reduce((s, r) => s + r.scopeChanges, 0)}; faults: ${Object.entries(faults).map(([k, v]) => `${k} x${v}`).join(', ')}\n`,
  );
});
