/**
 * The seeded whole-system simulation (issue 10 point 8).
 *
 * A *world* is one box-server, one mirror and one state dir; its seed decides everything the simulation does in
 * it. A world runs a sequence of *scenarios*; each scenario is:
 *   1. one to four random user operations on either side or both (test/sim/ops.ts), and now and then a change of
 *      scope (a path excluded in the config, or included again; drawn from a stream of its own);
 *   2. maybe a fault or two from box-server's control surface, armed for the first run only, and now and then a
 *      local-disk fault (test/sim/disk-faults.ts: a deep new chain, a file changed during its upload, a name not
 *      UTF-8, a swapped root, a revoked token; drawn from a stream of their own, each with its own invariant);
 *   3. a run of the real CLI: `sync --once` killed with SIGKILL right after a chosen request (or after a delay),
 *      or `daemon` killed the same way, or a plain `sync --once`;
 *   4. `sync --once` again, without faults, until it exits 0 (at most 3 runs);
 *   5. the invariants (test/sim/invariants.ts), from the disk and box-server only.
 * Scenario k of world S draws from its own PRNG, seeded from (S, k), so a scenario's choices never depend on how
 * many draws the ones before it made. A world stops at its first failing scenario (its state is then suspect).
 *
 * Replay: the same world seed replays the same operations, faults and kill points. Kill points are named by
 * request ("after the 2nd upload"), not by time, so a replay kills at the same step, with one exception: a few
 * kill points are plain delays, and conflict-copy names carry the clock time.
 */
import { Rng } from './prng.js';
import { boxIdsUnder, checkInvariants, noteRequired, outsideFingerprint, scopeDeletes, underExcluded, type Required } from './invariants.js';
import {
  armUploadChange,
  checkBadName,
  drawDiskFault,
  dropDeepChain,
  makeBadName,
  makeDeepChain,
  onlyBadNameParked,
  renameBadName,
  revokedTokenRun,
  swappedRootRun,
  unreadableRun,
  UNREADABLE_RATE,
  type BadName,
} from './disk-faults.js';
import { Contents, randomOp, toggleExclude, type OpContext } from './ops.js';
import { formatTree } from './trees.js';
import { unprivilegedUser } from '../support/run-as.js';
import { describeTrigger, runChild, startWorld, type ChildRun, type KillTrigger, type RequestClass, type World } from './world.js';

const DAEMON_RATE = 0.1;
/** Scenarios (not daemon ones) that end their operations with a change of scope: an exclude added or removed. */
const SCOPE_RATE = 0.15;

export interface SimOptions {
  /** Scenarios in this world. */
  readonly scenarios: number;
  /** Allow >= 20 MB files (upload sessions) in every world, not only in the ones whose seed picks them; slower. */
  readonly bigFiles?: boolean;
  /** Probability that a scenario's first run is killed (sync --once or daemon). */
  readonly killRate?: number;
  /** Also arm faults that park an item in boxsync's per-item backoff, and wait the backoff out (slow). */
  readonly itemFaults?: boolean;
  readonly log?: (line: string) => void;
}

export interface ScenarioFailure {
  readonly worldSeed: number;
  readonly scenario: number;
  readonly report: string;
}

export interface WorldResult {
  readonly seed: number;
  readonly scenariosRun: number;
  /** Runs that were killed with SIGKILL mid-way in scenarios whose invariants then held. */
  readonly killsSurvived: number;
  readonly daemonKillsSurvived: number;
  /** Kill triggers that never fired (the run ended first). */
  readonly killsMissed: number;
  /** Changes of scope (an exclude added or removed in the config) after which nothing was deleted. */
  readonly scopeChanges: number;
  readonly faults: Readonly<Record<string, number>>;
  readonly runs: number;
  readonly failure: ScenarioFailure | null;
  readonly ms: number;
}

/** A 32-bit seed for scenario k of world s. */
export function scenarioSeed(world: number, k: number): number {
  let h = (Math.imul(world >>> 0, 0x9e3779b1) ^ Math.imul(k + 1, 0x85ebca77)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d) >>> 0;
  return (h ^ (h >>> 15)) >>> 0;
}

interface Fault {
  readonly name: string;
  arm(w: World, rng: Rng): string;
}

const API_FOLDERS = /^\/2\.0\/folders\/[^/]+(\/items)?$/;
const API_DOWNLOAD = /^\/2\.0\/files\/[^/]+\/content$/;
const API_UPLOAD = /^\/api\/2\.0\/files(\/[^/]+)?\/content$/;
const API_ITEM = /^\/2\.0\/(files|folders)\/[^/]+$/;

/**
 * Faults armed for a scenario's first run. The HTTP layer retries idempotent calls and every 429 itself, so
 * these are invisible to the user except as delay. `ITEM_FAULTS` make one upload POST fail outright: boxsync then
 * parks the item with its per-item backoff (30 s doubling, kept across restarts, by design: see
 * test/cli/sync-exit-codes.test.ts), so `sync --once` cannot converge within seconds; they run only in the soak
 * with --item-faults, which waits out the backoff.
 */
const FAULTS: ReadonlyArray<readonly [number, Fault]> = [
  [2, { name: '429 Retry-After 1 on a listing', arm: (w) => (w.srv.control.failNext({ method: 'GET', path: API_FOLDERS, status: 429, retryAfterSec: 1 }), 'GET folders -> 429 Retry-After: 1') }],
  [1, { name: '429 Retry-After 1 on an upload', arm: (w) => (w.srv.control.failNext({ method: 'POST', path: API_UPLOAD, status: 429, retryAfterSec: 1 }), 'POST content -> 429 Retry-After: 1') }],
  [2, { name: '500 on listings', arm: (w, r) => { const n = r.int(1, 2); w.srv.control.failNext({ method: 'GET', path: API_FOLDERS, status: 500, count: n }); return `GET folders -> 500 x${n}`; } }],
  [2, { name: '503 on a download', arm: (w) => (w.srv.control.failNext({ method: 'GET', path: API_DOWNLOAD, status: 503 }), 'GET content -> 503') }],
  [1, { name: '500 on an item change', arm: (w) => (w.srv.control.failNext({ method: 'PUT', path: API_ITEM, status: 500 }), 'PUT file/folder -> 500') }],
  [1, { name: '500 on a trash', arm: (w) => (w.srv.control.failNext({ method: 'DELETE', path: API_ITEM, status: 500 }), 'DELETE file/folder -> 500') }],
  [3, { name: 'reset mid-body on downloads', arm: (w, r) => { const n = r.int(1, 2); w.srv.control.failNext({ method: 'GET', path: '/dl/*', reset: 'mid-body', count: n }); return `download body cut half-way x${n}`; } }],
  [1, { name: 'reset before the response', arm: (w) => (w.srv.control.failNext({ method: 'GET', path: '/2.0/*', reset: 'before-response' }), 'next API GET: connection reset before the response') }],
  [1, { name: '202 on commit', arm: (w, r) => { const n = r.int(1, 2); w.srv.control.commitAccepted(n, 1); return `upload session commit -> 202 Retry-After: 1 x${n}`; } }],
  [2, { name: 'expired tokens', arm: (w) => (w.srv.control.expireAllTokens(), 'every access token expired (the client must refresh)') }],
  [2, { name: 'event chaos', arm: (w, r) => { const duplicate = r.chance(0.6); const reorder = !duplicate || r.chance(0.5); w.srv.control.setEventChaos({ duplicate, reorder }); return `event chaos: duplicate=${duplicate} reorder=${reorder}`; } }],
  [1, { name: '500 on events', arm: (w) => (w.srv.control.failNext({ method: 'GET', path: '/2.0/events', status: 500 }), 'GET events -> 500') }],
];

const ITEM_FAULTS: ReadonlyArray<readonly [number, Fault]> = [
  [2, { name: '503 on an upload', arm: (w) => (w.srv.control.failNext({ method: 'POST', path: API_UPLOAD, status: 503 }), 'POST content -> 503') }],
  [1, { name: 'reset mid-body on an upload', arm: (w) => (w.srv.control.failNext({ method: 'POST', path: API_UPLOAD, reset: 'mid-body' }), 'upload body cut half-way') }],
];

function disarm(w: World): void {
  w.srv.control.clearFaults();
  w.srv.control.setEventChaos({ duplicate: false, reorder: false });
  w.srv.control.commitAccepted(0);
}

/** Request classes this scenario's operations should cause, read from its log lines. */
function expectedClasses(log: readonly string[]): RequestClass[] {
  const text = log.join('\n');
  const out: RequestClass[] = [];
  if (/local: (create|edit|type change|mkdir \S+ with)/.test(text)) out.push('upload');
  if (/box: (create|edit|type change|mkdir \S+ with|restore)/.test(text)) out.push('download');
  if (/local: (rename|case-only|move|delete|type change)|box: (rename|case-only|move|trash|type change)/.test(text)) out.push('write');
  if (/\b20\d{6} bytes/.test(text)) out.push('session-part', 'commit');
  return out;
}

function pickTrigger(rng: Rng, log: readonly string[]): KillTrigger {
  const expected = expectedClasses(log);
  const table: Array<[number, KillTrigger]> = [
    [3, { kind: 'request', match: 'any', n: rng.int(1, 8) }],
    [1, { kind: 'request', match: 'list', n: rng.int(1, 2) }],
    [1, { kind: 'delay', ms: rng.int(150, 1200) }],
  ];
  if (expected.length > 0) table.push([6, { kind: 'request', match: rng.pick(expected), n: rng.chance(0.75) ? 1 : 2 }]);
  return rng.weighted(table);
}

/**
 * (e) An upload session that a kill interrupted (parts sent, no commit) is resumed by the next run, not started
 * again: the next run must address that same session id (status, parts, or commit) before any new session.
 */
function checkSessionsResumed(killed: ChildRun, next: ChildRun | undefined): string[] {
  const part = /^\/api\/2\.0\/files\/upload_sessions\/([^/]+)(\/commit)?$/;
  const sent = new Set<string>();
  const committed = new Set<string>();
  for (const r of killed.requests) {
    const m = part.exec(r.path);
    if (!m) continue;
    if (r.method === 'PUT' && r.status === 200) sent.add(m[1]!);
    if (m[2] && r.status >= 200 && r.status < 300) committed.add(m[1]!);
  }
  const interrupted = [...sent].filter((id) => !committed.has(id));
  if (interrupted.length === 0 || next === undefined) return [];
  const out: string[] = [];
  for (const id of interrupted) {
    const firstUse = next.requests.findIndex((r) => part.exec(r.path)?.[1] === id);
    const firstNew = next.requests.findIndex((r) => r.method === 'POST' && /\/upload_sessions$/.test(r.path));
    if (firstUse < 0 || (firstNew >= 0 && firstNew < firstUse)) {
      out.push(`(e) upload session ${id}, interrupted by the kill after some parts, was ${firstNew >= 0 ? 'restarted (a new session was created)' : 'not resumed'} by the next run`);
    }
  }
  return out;
}

function runLine(r: ChildRun): string {
  const end = r.killed ? `killed (${r.killNote})` : r.signal ? `signal ${r.signal}` : `exit ${r.code}`;
  return `${r.command}: ${end}, ${r.ms} ms, ${r.requests.length} requests`;
}

function runDetail(r: ChildRun): string {
  const out = r.stdout.trim().split('\n').slice(-8).join('\n');
  const err = r.stderr.trim().split('\n').slice(-Number(process.env.BOXSYNC_SIM_TAIL ?? 15)).join('\n');
  return `${runLine(r)}\n  stdout (tail):\n${out.replace(/^/gm, '    ')}\n  stderr (tail):\n${err.replace(/^/gm, '    ')}`;
}

export async function runWorld(seed: number, opts: SimOptions): Promise<WorldResult> {
  const t0 = Date.now();
  const say = opts.log ?? (() => undefined);
  const setup = new Rng(scenarioSeed(seed, -1));
  const setupConcurrency = setup.pick([1, 2, 4]);
  // Two worlds in three plan their full passes in windows of a few entries (the trees are small), so that moves and
  // deletions cross windows. Drawn from a stream of its own, so every other choice of a seed stays as it was.
  const windowEntries = new Rng(scenarioSeed(seed, -2)).pick([undefined, 3, 8]);
  const w = await startWorld({ transferConcurrency: setupConcurrency, ...(windowEntries === undefined ? {} : { planWindowEntries: windowEntries }) });
  // About one world in five uses >= 20 MB files (upload sessions, 4 MB parts); --big-files forces it.
  const bigFiles = setup.chance(0.2) || (opts.bigFiles ?? false);
  const killRate = opts.killRate ?? 0.68;
  const contents = new Contents(`w${seed}`);
  const trashed: OpContext['trashed'] = [];
  const required: Required = new Map();
  const worldLog: string[] = [`world ${seed}: box-server ${w.srv.baseUrl}, mirror ${w.mirror}, transferConcurrency ${setupConcurrency}${windowEntries ? `, windows of ${windowEntries}` : ''}${bigFiles ? ', big files' : ''}`];
  const faults: Record<string, number> = {};
  let killsSurvived = 0;
  let daemonKillsSurvived = 0;
  let killsMissed = 0;
  let scopeChanges = 0;
  let runs = 0;
  let failure: ScenarioFailure | null = null;
  let k = 0;
  // The path the config excludes now (toggleExclude), at most one at a time.
  let excluded: string | null = null;
  try {
    let outsideBefore = await outsideFingerprint(w);
    // The user the unreadable-entry fault runs the CLI as (root reads a mode-000 entry), or null where none can.
    const who = unprivilegedUser();
    const unprivileged = 'as' in who ? who.as : null;
    for (k = 0; k < opts.scenarios; k++) {
      const rng = new Rng(scenarioSeed(seed, k));
      const log: string[] = [`scenario ${k} (world ${seed}, scenario seed ${scenarioSeed(seed, k)}):`];
      const ctx: OpContext = { w, rng, contents, trashed, bigFiles };
      const runRng = rng.fork();
      const mode = runRng.weighted<'kill' | 'daemon' | 'plain'>([
        [killRate, 'kill'],
        [DAEMON_RATE, 'daemon'],
        [Math.max(0, 1 - killRate - DAEMON_RATE), 'plain'],
      ]);
      const nOps = k === 0 ? 4 : rng.int(1, 4);
      const applyOps = async (racing: boolean): Promise<void> => {
        for (let i = 0; i < nOps; i++) {
          try {
            const line = await randomOp(ctx);
            if (line !== null) log.push(`  ${line}`);
          } catch (e) {
            // Only a running daemon can move things under an operation's feet; otherwise it is a simulation bug.
            if (!racing) throw e;
            log.push(`  (an operation raced with the daemon and gave up: ${(e as Error).message})`);
          }
        }
      };
      // With the daemon, the operations happen while it runs (its watcher and long poll see them live).
      if (mode !== 'daemon') await applyOps(false);
      // A change of scope between runs (not with the daemon, which reads the config when it starts). Its own
      // stream, so that every other choice of a seed stays as it was.
      const scopeRng = new Rng(scenarioSeed(seed, 10_000 + k));
      let scope: { path: string; ids: Map<string, string> } | null = null;
      if (mode !== 'daemon' && scopeRng.chance(SCOPE_RATE)) {
        const t = await toggleExclude({ ...ctx, rng: scopeRng }, excluded);
        if (t !== null) {
          const path = excluded ?? t.excluded!;
          excluded = t.excluded;
          log.push(`  ${t.line}`);
          scope = { path, ids: boxIdsUnder(w, underExcluded(path)) };
          // The config is the simulation's own edit, not boxsync's.
          outsideBefore = await outsideFingerprint(w);
        }
      }
      // A local-disk fault (test/sim/disk-faults.ts), from a stream of its own as well.
      const disk = drawDiskFault(new Rng(scenarioSeed(seed, 20_000 + k)), { daemon: mode === 'daemon', first: k === 0 });
      const diskRng = new Rng(scenarioSeed(seed, 30_000 + k));
      const diskFailures: string[] = [];
      const extraRuns: ChildRun[] = [];
      let deepTop: string | null = null;
      let bad: BadName | null = null;
      if (disk !== null) faults[`disk: ${disk}`] = (faults[`disk: ${disk}`] ?? 0) + 1;
      if (disk === 'deep chain') {
        const d = await makeDeepChain(ctx, diskRng);
        deepTop = d.top;
        log.push(`  ${d.line}`);
      } else if (disk === 'bad name') {
        bad = await makeBadName(w, diskRng, contents);
        log.push(`  ${bad.line}`);
      } else if (disk === 'unmounted root') {
        const s = await swappedRootRun(w);
        extraRuns.push(s.run);
        diskFailures.push(...s.failures);
        log.push(`  disk fault: the mirror swapped for a new empty folder (a new inode) for one run: ${runLine(s.run)}; then put back`);
      }
      const armed: string[] = [];
      if (runRng.chance(0.45)) {
        for (let i = runRng.int(1, 2); i > 0; i--) {
          const f = runRng.weighted(opts.itemFaults ? [...FAULTS, ...ITEM_FAULTS] : FAULTS);
          armed.push(f.arm(w, runRng));
          faults[f.name] = (faults[f.name] ?? 0) + 1;
        }
        log.push(`  faults for the first run: ${armed.join('; ')}`);
      }
      // Armed after the HTTP faults, so that a 429 on the upload armed above comes first.
      if (disk === 'upload change') log.push(`  ${(await armUploadChange(w, diskRng, contents, required)).line}`);
      const childRuns: ChildRun[] = [];
      // A run ended: exit 0, or exit 1 with only the name that is not UTF-8 parked.
      const ended = (r: ChildRun): boolean => r.code === 0 || (bad !== null && onlyBadNameParked(r, bad));
      await noteRequired(w, required, `scenario ${k} run 1`, excluded);
      let first: ChildRun;
      if (mode === 'daemon') {
        const opsAtMs = runRng.int(900, 2500);
        const t: KillTrigger = { kind: 'delay', ms: opsAtMs + runRng.int(200, 3000) };
        log.push(`  run 1: daemon; the operations below ${opsAtMs} ms after its start; kill -9 ${describeTrigger(t)}`);
        first = await runChild(w, ['daemon'], {
          trigger: t,
          timeoutMs: 10_000,
          during: async () => {
            await new Promise((r) => setTimeout(r, opsAtMs));
            await applyOps(true);
            // The daemon may already be syncing these: they are "on disk or on Box while a sync runs".
            await noteRequired(w, required, `scenario ${k}, during the daemon run`, excluded);
          },
        });
      } else if (mode === 'kill') {
        const t = pickTrigger(runRng, log);
        log.push(`  run 1: sync --once, kill -9 ${describeTrigger(t)}`);
        first = await runChild(w, ['sync', '--once'], { trigger: t });
      } else {
        log.push('  run 1: sync --once');
        first = await runChild(w, ['sync', '--once']);
      }
      childRuns.push(first);
      disarm(w);
      let last = first;
      // A daemon that was never killed (its trigger did not fire) is ended by the timeout: that is no failure.
      const daemonTimedOut = mode === 'daemon' && !first.killed;
      for (let i = 0; (daemonTimedOut || !ended(last)) && i < 3; i++) {
        // The per-item backoff starts at 15-30 s; with item faults armed, wait it out once.
        if (opts.itemFaults && i === 1 && /will retry with backoff/.test(last.stderr)) await new Promise((r) => setTimeout(r, 31_000));
        await noteRequired(w, required, `scenario ${k} run ${childRuns.length + 1}`, excluded);
        last = await runChild(w, ['sync', '--once']);
        childRuns.push(last);
        if (ended(last)) break;
      }
      runs += childRuns.length + extraRuns.length;
      for (const r of childRuns) log.push(`  ${runLine(r)}`);
      let check = await checkInvariants(w, { required, written: contents.written, outsideBefore, excluded, parked: new Set(bad ? [bad.decoded] : []) });
      const failures = [...diskFailures, ...check.failures];
      if (bad !== null) {
        failures.push(...(await checkBadName(w, bad, childRuns)));
        if (failures.length === 0 && ended(last)) {
          // Renamed to a valid name, it syncs at the next run.
          const to = await renameBadName(w, bad);
          await noteRequired(w, required, `scenario ${k}, after the rename of the name that is not UTF-8`, excluded);
          const r = await runChild(w, ['sync', '--once']);
          extraRuns.push(r);
          runs += 1;
          log.push(`  disk fault: renamed to ${to}; ${runLine(r)}`);
          if (r.code !== 0) failures.push(`(bad name) the run after its rename to ${to} exited ${r.signal ?? r.code}, not 0`);
          check = await checkInvariants(w, { required, written: contents.written, outsideBefore, excluded });
          failures.push(...check.failures);
        }
      }
      if (scope !== null) failures.push(...scopeDeletes(scope.path, childRuns, scope.ids));
      if (first.killed) failures.push(...checkSessionsResumed(first, childRuns[1]));
      if (!ended(last)) failures.unshift(`(liveness) sync --once did not exit 0 within 3 runs after the first (last: ${last.signal ?? `exit ${last.code}`})`);
      // An unreadable entry, after a scenario that passed, from a stream of its own (every other draw stays).
      if (failures.length === 0 && unprivileged !== null && new Rng(scenarioSeed(seed, 40_000 + k)).chance(UNREADABLE_RATE)) {
        const u = await unreadableRun(w, new Rng(scenarioSeed(seed, 50_000 + k)), contents, unprivileged, excluded);
        if (u !== null) {
          faults['disk: unreadable entry'] = (faults['disk: unreadable entry'] ?? 0) + 1;
          extraRuns.push(...u.runs);
          runs += u.runs.length;
          failures.push(...u.failures);
          log.push(`  ${u.line}`);
          if (u.failures.length === 0) {
            check = await checkInvariants(w, { required, written: contents.written, outsideBefore, excluded });
            failures.push(...check.failures);
          }
        }
      }
      if (failures.length === 0 && disk === 'token revoked') {
        const t = await revokedTokenRun(w);
        extraRuns.push(t.run);
        runs += 1;
        failures.push(...t.failures);
        log.push(`  disk fault: a daemon on the converged world, every token revoked once it is idle: ${runLine(t.run)}; then a fresh login`);
      }
      worldLog.push(...log);
      if (failures.length > 0) {
        const report = [
          `SIMULATION FAILURE: world seed ${seed}, scenario ${k} (replay: npm run soak -- --seed ${seed} --scenarios ${k + 1} --per-world ${k + 1})`,
          ...failures.map((f) => `  ${f}`),
          '--- operation log of the world',
          ...worldLog,
          '--- runs of the failing scenario',
          ...[...extraRuns, ...childRuns].map(runDetail),
          '--- mirror',
          formatTree(check.local),
          '--- Box',
          formatTree(check.box),
        ].join('\n');
        failure = { worldSeed: seed, scenario: k, report };
        say(report);
        break;
      }
      if (scope !== null) scopeChanges += 1;
      if (deepTop !== null) {
        // The chain goes, so that later scenarios' operations pick among the usual few paths.
        await dropDeepChain(w, deepTop);
        worldLog.push(`  disk fault: after the checks, the deep chain ${deepTop}/ deleted locally (the next runs carry it to Box)`);
      }
      if (first.killed) {
        if (mode === 'daemon') daemonKillsSurvived += 1;
        else killsSurvived += 1;
      } else if (mode !== 'plain') {
        killsMissed += 1;
      }
      say(`${log.join('\n')}\nworld ${seed} scenario ${k}: ok (${childRuns.map((r) => (r.killed ? 'killed' : r.signal ?? r.code)).join(', ')})`);
    }
  } finally {
    await w.close();
  }
  return {
    seed,
    scenariosRun: failure ? k + 1 : opts.scenarios,
    killsSurvived,
    daemonKillsSurvived,
    killsMissed,
    scopeChanges,
    faults,
    runs,
    failure,
    ms: Date.now() - t0,
  };
}
