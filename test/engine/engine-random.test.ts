/**
 * Seeded random rounds through the whole engine (real disk, real journal, in-memory Box): each round changes
 * both sides at random (create, edit, delete, rename, move of files and folders), runs to quiescence, and then
 * asserts convergence (both trees equal, name for name and byte for byte) and that no edit was lost (every
 * content written this round is in a tree or in a trash). The seed is printed when a round fails; replay it
 * with ENGINE_SEED=<seed>. A third variant plans every full pass in windows of 2 or 3 rows (windows.ts), so
 * that most moves start in one window and end in another.
 */
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { asRelPath, type RemoteId } from '../../src/core/model.js';
import { closedAfterEach } from '../support/closed-after-each.js';
import { makeHarness, type Harness } from './support/harness.js';
import { clearClean } from '../../src/engine/clean-mark.js';

const harness = closedAfterEach(makeHarness);

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Tree = Map<string, string>;
const DIR = '<dir>';

async function localTree(abs: string, rel = ''): Promise<Tree> {
  const out: Tree = new Map();
  for (const e of await readdir(abs, { withFileTypes: true })) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) {
      out.set(p, DIR);
      for (const [k, v] of await localTree(join(abs, e.name), p)) out.set(k, v);
    } else out.set(p, await readFile(join(abs, e.name), 'utf8'));
  }
  return out;
}

function remoteTree(h: Harness, id: RemoteId = h.top.id, rel = ''): Tree {
  const out: Tree = new Map();
  for (const e of h.store.allEntries().filter((x) => x.parentId === id && x.status === 'active')) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    if (e.kind === 'folder') {
      out.set(p, DIR);
      for (const [k, v] of remoteTree(h, e.id, p)) out.set(k, v);
    } else out.set(p, h.store.contentOf(e.id)?.toString() ?? '');
  }
  return out;
}

async function trashedContents(h: Harness): Promise<Set<string>> {
  const out = new Set<string>();
  for (const e of h.store.allEntries()) if (e.status !== 'active' && e.kind === 'file') out.add(h.store.contentOf(e.id)?.toString() ?? '');
  const trash = join(h.stateDir, 'trash');
  const walk = async (dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      if (e.isDirectory()) await walk(join(dir, e.name));
      else out.add(await readFile(join(dir, e.name), 'utf8'));
    }
  };
  await walk(trash);
  return out;
}

const pick = <T>(rnd: () => number, xs: readonly T[]): T | undefined => (xs.length === 0 ? undefined : xs[Math.floor(rnd() * xs.length)]);

async function mutateLocal(h: Harness, rnd: () => number, fresh: () => string, written: Map<string, string>, touched: string[]): Promise<void> {
  const tree = await localTree(h.localPath);
  const files = [...tree].filter(([, v]) => v !== DIR).map(([k]) => k);
  const dirs = [...tree].filter(([, v]) => v === DIR).map(([k]) => k);
  const where = (): string => pick(rnd, ['', ...dirs]) ?? '';
  const at = (dir: string, name: string): string => (dir ? `${dir}/${name}` : name);
  const r = rnd();
  if (r < 0.3 || files.length === 0) {
    const p = at(where(), `l${fresh()}.txt`);
    const c = `local ${fresh()}`;
    await writeFile(join(h.localPath, p), c);
    written.set(p, c);
    touched.push(p);
  } else if (r < 0.5) {
    const p = pick(rnd, files)!;
    const c = `local edit ${fresh()}`;
    await writeFile(join(h.localPath, p), c);
    written.set(p, c);
    touched.push(p);
  } else if (r < 0.6) {
    const p = at(where(), `ld${fresh()}`);
    await mkdir(join(h.localPath, p));
    touched.push(p);
  } else if (r < 0.75) {
    const p = pick(rnd, [...files, ...dirs])!;
    await rm(join(h.localPath, p), { recursive: true });
    touched.push(p);
    for (const k of [...written.keys()]) if (k === p || k.startsWith(`${p}/`)) written.delete(k);
  } else {
    const p = pick(rnd, [...files, ...dirs])!;
    const target = pick(rnd, ['', ...dirs.filter((d) => d !== p && !d.startsWith(`${p}/`))]) ?? '';
    const to = at(target, `lm${fresh()}${p.endsWith('.txt') ? '.txt' : ''}`);
    await rename(join(h.localPath, p), join(h.localPath, to));
    touched.push(p, to);
    for (const [k, v] of [...written]) {
      if (k === p || k.startsWith(`${p}/`)) {
        written.delete(k);
        written.set(to + k.slice(p.length), v);
      }
    }
  }
}

async function mutateRemote(h: Harness, rnd: () => number, fresh: () => string, written: Map<string, string>): Promise<void> {
  const active = h.store.allEntries().filter((e) => e.status === 'active');
  const inRoot = (id: RemoteId | null): boolean => {
    for (let cur = id; cur; cur = active.find((e) => e.id === cur)?.parentId ?? null) if (cur === h.top.id) return true;
    return false;
  };
  const mine = active.filter((e) => e.id !== h.top.id && inRoot(e.id));
  const files = mine.filter((e) => e.kind === 'file');
  const folders = [h.top, ...mine.filter((e) => e.kind === 'folder')];
  const r = rnd();
  const key = (id: RemoteId): string => `remote:${id}`;
  if (r < 0.3 || files.length === 0) {
    const c = `remote ${fresh()}`;
    const e = h.store.seedFile(pick(rnd, folders)!.id, `r${fresh()}.txt`, c);
    written.set(key(e.id), c);
  } else if (r < 0.5) {
    const f = pick(rnd, files)!;
    const c = `remote edit ${fresh()}`;
    h.store.editRemotely(f.id, c);
    written.set(key(f.id), c);
  } else if (r < 0.6) {
    h.store.seedFolder(pick(rnd, folders)!.id, `rd${fresh()}`);
  } else if (r < 0.75) {
    const victim = pick(rnd, mine)!;
    await h.store.trash(victim.id, victim.kind);
    written.delete(key(victim.id));
  } else {
    const item = pick(rnd, mine)!;
    const below = (id: RemoteId): boolean => {
      for (let cur: RemoteId | null = id; cur; cur = active.find((e) => e.id === cur)?.parentId ?? null) if (cur === item.id) return true;
      return false;
    };
    const target = pick(rnd, folders.filter((f) => !below(f.id)))!;
    await h.store.move({ id: item.id, kind: item.kind, parentId: target.id, name: `rm${fresh()}${item.kind === 'file' ? '.txt' : ''}` });
  }
}

/** A short settle time for paths found gone by hinted passes (the daemon's is SETTLE_GONE_MS). */
const SETTLE_MS = 30;

/**
 * A pass as the daemon runs it: what the pass deferred as found gone with no move in sight is hinted again once
 * it has settled, and passes run until nothing is left unsettled (bounded). Counts every pass's operations.
 */
async function runLikeDaemon(h: Harness, countOps: (n: number) => void): Promise<Awaited<ReturnType<Harness['run']>>> {
  for (let i = 0; i < 5; i++) {
    const s = await h.run();
    countOps(Object.values(s.ops).reduce((x, y) => x + (y ?? 0), 0));
    const unsettled = h.engine.takeUnsettled();
    if (unsettled.local.length === 0 || s.outcome !== 'converged') return s;
    // The daemon's timer: the paths are hinted again once their settle time has passed.
    await new Promise((r) => setTimeout(r, SETTLE_MS + 10));
    for (const u of unsettled.local) h.engine.hintLocal(u.root, u.paths);
    h.engine.hintRemote(unsettled.remoteIds);
  }
  throw new Error('paths still unsettled after 5 passes');
}

/**
 * With `hinted`, the engine is driven as the daemon drives it: every local change is announced through
 * hintLocal and the pass looks only at what the hints and the remote events touched. The quiet second run then
 * gets no hints, so it rescans everything and would find whatever the hinted pass missed.
 */
async function runSeed(seed: number, rounds: number, hinted = false, windowEntries?: number): Promise<void> {
  const h = await harness({ ...(windowEntries === undefined ? {} : { windowEntries }), ...(hinted ? { settleGoneMs: SETTLE_MS } : {}) });
  const rnd = mulberry32(seed);
  let n = 0;
  const fresh = (): string => String(++n);
  let opsRun = 0;
  let windows = 0;
  for (let round = 1; round <= rounds; round++) {
    const written = new Map<string, string>();
    const touched: string[] = [];
    const changes = 1 + Math.floor(rnd() * 6);
    for (let i = 0; i < changes; i++) {
      if (rnd() < 0.5) await mutateLocal(h, rnd, fresh, written, touched);
      else await mutateRemote(h, rnd, fresh, written);
    }
    if (hinted && round > 1) h.engine.hintLocal(h.root.id, touched.map(asRelPath));
    // Windowed rounds plan the whole root: the clean mark of the last run is dropped (a run after a converged one
    // would plan only what changed, in no window).
    if (windowEntries !== undefined) clearClean(h.journal, h.root);
    let s = hinted ? await runLikeDaemon(h, (n) => (opsRun += n)) : await h.run();
    if (!hinted) opsRun += Object.values(s.ops).reduce((x, y) => x + (y ?? 0), 0);
    // A round that deleted every synced item on one side meets the emptied-root guards (issue 16), whatever the
    // count: the local root that lists empty, then the delete-all guard. Each must name that case only, with the
    // side really empty; the user's confirmation lets it go (a confirmed local-root-empty leads to the next).
    for (let asked = 0; asked < 2 && s.outcome === 'guard'; asked++) {
      const emptied =
        /the local folder .* is suddenly empty while files were in sync; .*boxsync confirm (local-root-empty:\S+),/s.exec(s.message) ??
        /refusing to delete all \d+ synced items? .*--confirm (\S+)\)\./s.exec(s.message);
      if (!emptied) break;
      const localEmpty = (await localTree(h.localPath)).size === 0;
      const remoteEmpty = remoteTree(h).size === 0;
      expect(emptied[1]!.startsWith('local-root-empty:') ? localEmpty : localEmpty || remoteEmpty, `seed ${seed}, round ${round}: ${s.message}`).toBe(true);
      s = await h.engine.runOnce({ confirm: [emptied[1]!] });
      opsRun += Object.values(s.ops).reduce((x, y) => x + (y ?? 0), 0);
    }
    windows += s.windows;
    const why = `seed ${seed}, round ${round}: ${s.message}`;
    expect(s.outcome, why).toBe('converged');
    const local = await localTree(h.localPath);
    expect(Object.fromEntries(remoteTree(h)), why).toEqual(Object.fromEntries(local));
    const everywhere = new Set([...local.values(), ...(await trashedContents(h))]);
    for (const c of written.values()) expect(everywhere.has(c), `${why}: content "${c}" was lost`).toBe(true);
    const again = await h.run();
    expect(again.ops, `${why}: a second run still had work`).toEqual({});
  }
  // Nearly every round changes something that must be synced (a few may cancel out): the rounds are not idle.
  expect(opsRun).toBeGreaterThan(rounds / 2);
  // Small windows: the full passes really were planned piecewise (a root of a few rows fits one window).
  if (windowEntries !== undefined) expect(windows).toBeGreaterThan(rounds);
  else expect(windows).toBe(0);
}

describe('engine: seeded random rounds', () => {
  // ENGINE_SEED=<n> replays one seed; ENGINE_SEEDS=<count> runs seeds 1..count (a longer soak). Seeds that once
  // found a bug run every time. A run outside CI also tries a new seed from the clock (to explore); CI runs the
  // same seeds every time, so that what it says is about the change, not about the seed it drew.
  const REGRESSION_SEEDS = [334322, 905792, 674993];
  const count = Number(process.env.ENGINE_SEEDS ?? 0);
  const fixed = process.env.ENGINE_SEED
    ? [Number(process.env.ENGINE_SEED)]
    : count > 0
      ? Array.from({ length: count }, (_, i) => i + 1)
      : [1, 2, 3, ...REGRESSION_SEEDS, ...(process.env.CI ? [] : [Date.now() % 1_000_000])];
  for (const seed of fixed) {
    it(`converges without losing an edit (seed ${seed})`, async () => {
      await runSeed(seed, 12);
    });
    it(`converges through hinted daemon passes too (seed ${seed})`, async () => {
      await runSeed(seed, 12, true);
    });
    // Windows of 2 and 3 rows: nearly every full pass is planned piecewise, and most moves cross windows.
    it(`converges when full passes are planned in small windows (seed ${seed})`, async () => {
      await runSeed(seed, 12, false, 2 + (seed % 2));
    });
  }
});
