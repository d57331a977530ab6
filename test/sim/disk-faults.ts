/**
 * Local-disk faults of the simulation (issue 26): what the disk or the account does to a running sync, as opposed
 * to the user's operations (ops.ts) and box-server's HTTP faults (sim.ts). Each comes with the invariant it must
 * keep, checked here beside the world's invariants (invariants.ts):
 *   - a deep new chain (60-120 nested new folders with a file at the bottom, made locally or on Box): the world
 *     converges as usual, within the runs a scenario allows; the chain is deleted locally after the scenario;
 *   - a file truncated or grown while it uploads (box-server's `hook` on the upload request changes it while the
 *     client is held with its body unread): the final content reaches Box, nothing partial anywhere ((c));
 *   - a local name that is not UTF-8 (bytes 0xff 0xfe): every run that ends reports it PARKED, escaped, and exits
 *     1; it is never uploaded, never deleted; (a) leaves exactly that name out; renamed, it syncs in one run;
 *   - an unmounted root: the mirror folder is swapped for a new empty one (renamed aside + mkdir, a new inode; a
 *     tmpfs mount would need a cleanup this process cannot promise). `sync --once` must exit 3, having trashed
 *     nothing on either side, sent no DELETE and written nothing into the new folder; the folder is put back and
 *     the scenario's runs converge as usual;
 *   - every token revoked while the daemon is idle (its long poll answered at least once): the daemon exits 1
 *     within REVOKE_EXIT_MS, having changed nothing; the world then logs in afresh.
 *   - an unreadable entry (after a scenario passed, from a stream of its own): a synced file or folder made mode 000
 *     and a new file beside it; the world is given to an unprivileged user (root reads a mode-000 entry) for two
 *     `sync --once` runs as that user: the first parks the entry (exit 1), uploads the new file and deletes nothing;
 *     with the mode put back, the second exits 0 with nothing parked. Not drawn where no such user can run the CLI.
 *
 * They are drawn from a stream of their own (scenario seed 20000 + k), so the operations, faults and kill points
 * every other stream draws stay as they were.
 */
import { appendFileSync, chmodSync, lchownSync, lstatSync, truncateSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Rng } from './prng.js';
import type { Contents, OpContext } from './ops.js';
import { readBoxTree, readFilesUnder, readLocalTree, sha1Of } from './trees.js';
import { login, runChild, type ChildRun, type World } from './world.js';
import { escapeText } from '../../src/core/escape.js';
import type { RunAs } from '../support/cli.js';
import { giveTo } from '../support/run-as.js';

export type DiskFaultKind = 'deep chain' | 'upload change' | 'bad name' | 'unmounted root' | 'token revoked';

/** Scenarios that get a disk fault (drawn from their own stream). */
export const DISK_FAULT_RATE = 0.2;
const KINDS: ReadonlyArray<readonly [number, DiskFaultKind]> = [
  [2, 'deep chain'],
  [3, 'upload change'],
  [2, 'bad name'],
  [2, 'unmounted root'],
  [1, 'token revoked'],
];
/** Bound on the daemon's exit after its tokens were revoked (it finds out at its next long poll, every second). */
export const REVOKE_EXIT_MS = 20_000;

/** This scenario's disk fault, or null. `daemon`: its first run is the daemon; `first`: the world's first scenario. */
export function drawDiskFault(rng: Rng, o: { daemon: boolean; first: boolean }): DiskFaultKind | null {
  if (!rng.chance(DISK_FAULT_RATE)) return null;
  const kind = rng.weighted(KINDS);
  // The daemon scenarios apply their operations while it runs; a revocation comes after the scenario, in a daemon
  // run of its own. A swapped root is only told apart from a new empty folder once a sync recorded its identity.
  if (o.daemon && kind !== 'token revoked') return null;
  if (o.first && kind === 'unmounted root') return null;
  return kind;
}

const parkedLines = (stderr: string): string[] => stderr.split('\n').filter((l) => l.startsWith('  PARKED '));

// ---------------------------------------------------------------------------------------------- deep chain

/** Make a chain of new folders, locally or on Box; returns its top folder (deleted after the scenario) and a line. */
export async function makeDeepChain(ctx: OpContext, rng: Rng): Promise<{ top: string; line: string }> {
  const depth = rng.int(60, 120);
  const top = `deep-${rng.hex(6)}`;
  const names = [top, ...Array.from({ length: depth - 1 }, (_, i) => `n${i + 1}`)];
  const onBox = rng.chance(0.5);
  const data = ctx.contents.make(rng, `${onBox ? 'box' : 'local'} create at the bottom of ${top}/ (${depth} folders)`);
  if (onBox) {
    let id = ctx.w.remoteRootId;
    for (const n of names) id = ctx.w.web.createFolder(id, n).id;
    ctx.w.web.uploadFile(id, 'bottom.txt', data);
  } else {
    const dir = join(ctx.w.mirror, ...names);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'bottom.txt'), data);
  }
  return { top, line: `disk fault: a deep chain ${top}/ of ${depth} new folders with bottom.txt (${sha1Of(data).slice(0, 10)}) made ${onBox ? 'on Box' : 'locally'}` };
}

// ---------------------------------------------------------------------------------------------- upload change

export interface UploadChange {
  readonly path: string;
  readonly line: string;
  /** True once the hook ran (the first upload request of run 1 arrived). */
  fired(): boolean;
}

/**
 * A new local file of 1-4 MB (a simple upload, read while the request is held), and a hook on the first upload
 * request of the next run that truncates it or appends to it. The content after the change is registered as
 * written; the one before is dropped from `required` once the hook ran (the user destroyed it, not boxsync).
 */
export async function armUploadChange(w: World, rng: Rng, contents: Contents, required: Map<string, string>): Promise<UploadChange> {
  const path = `moving-${rng.hex(6)}.bin`;
  const size = rng.int(1_000_000, 4_000_000);
  const head = `sim upload change ${rng.hex(8)}\n`;
  const before = Buffer.alloc(size, head);
  contents.written.set(sha1Of(before), `local create ${path} (${size} bytes, changed during its upload)`);
  await writeFile(join(w.mirror, path), before);
  const truncate = rng.chance(0.5);
  const cut = rng.int(100, Math.floor(size / 2));
  const extra = Buffer.alloc(rng.int(1000, 300_000), `grown ${rng.hex(8)}\n`);
  const after = truncate ? before.subarray(0, cut) : Buffer.concat([before, extra]);
  contents.written.set(sha1Of(after), `local ${truncate ? 'truncation' : 'growth'} of ${path} during its upload (${after.length} bytes)`);
  let fired = false;
  w.srv.control.failNext({
    method: 'POST',
    path: /^\/api\/2\.0\/files(\/[^/]+)?\/content$/,
    hook: () => {
      fired = true;
      const abs = join(w.mirror, path);
      if (truncate) truncateSync(abs, cut);
      else appendFileSync(abs, extra);
      required.delete(sha1Of(before));
    },
  });
  return {
    path,
    line: `disk fault: new local file ${path} (${size} bytes), ${truncate ? `truncated to ${cut} bytes` : `grown by ${extra.length} bytes`} when the first upload request of run 1 arrives`,
    fired: () => fired,
  };
}

// ---------------------------------------------------------------------------------------------- bad name

export interface BadName {
  /** The name as readdir decodes it (U+FFFD for the bad bytes): what readLocalTree reports. */
  readonly decoded: string;
  readonly raw: Buffer;
  readonly data: Buffer;
  readonly parkedLine: string;
  readonly line: string;
}

/** A file in the mirror's top folder whose name holds the bytes 0xff 0xfe. */
export async function makeBadName(w: World, rng: Rng, contents: Contents): Promise<BadName> {
  const stem = `bad-${rng.hex(4)}`;
  const rawName = Buffer.concat([Buffer.from(stem), Buffer.from([0xff, 0xfe]), Buffer.from('.txt')]);
  const raw = Buffer.concat([Buffer.from(`${w.mirror}/`), rawName]);
  const data = contents.make(rng, `local create ${stem}\\xff\\xfe.txt (a name that is not UTF-8)`);
  await writeFile(raw, data);
  return {
    decoded: rawName.toString('utf8'),
    raw,
    data,
    parkedLine: `  PARKED ${stem}\\xff\\xfe.txt: this name is not valid UTF-8`,
    line: `disk fault: new local file ${stem}\\xff\\xfe.txt (${sha1Of(data).slice(0, 10)}), a name that is not UTF-8`,
  };
}

/** A run that ended with only the bad name parked: exit 1, that one PARKED line, no FAILED line. */
export function onlyBadNameParked(r: ChildRun, b: BadName): boolean {
  const parked = parkedLines(r.stderr);
  return r.code === 1 && parked.length === 1 && parked[0]!.startsWith(b.parkedLine) && !/^\s*FAILED /m.test(r.stderr);
}

/** The bad name's invariant after the scenario's runs: reported by each run that ended, still there, not on Box. */
export async function checkBadName(w: World, b: BadName, runs: readonly ChildRun[]): Promise<string[]> {
  const out: string[] = [];
  for (const [i, r] of runs.entries()) {
    if (r.killed || r.code === null) continue;
    if (r.code === 0 || !parkedLines(r.stderr).some((l) => l.startsWith(b.parkedLine))) {
      out.push(`(bad name) run ${i + 1} (exit ${r.code}) did not report ${JSON.stringify(b.parkedLine.trim())}`);
    }
  }
  let now: Buffer | null = null;
  try {
    now = await readFile(b.raw);
  } catch {
    now = null;
  }
  if (now === null || sha1Of(now) !== sha1Of(b.data)) out.push(`(bad name) the file ${escapeText(b.decoded)} is ${now === null ? 'gone' : 'changed'}: boxsync must never touch it`);
  for (const p of readBoxTree(w.web, w.remoteRootId).entries.keys()) {
    if (p.includes('\uFFFD') || p.includes('\\xff')) out.push(`(bad name) Box holds ${p}: the name was uploaded`);
  }
  return out;
}

/** Rename the bad name to a valid one (not used by ops.ts); the next run must sync it. */
export async function renameBadName(w: World, b: BadName): Promise<string> {
  const to = `fixed-${sha1Of(b.raw).slice(0, 6)}.txt`;
  await rename(b.raw, join(w.mirror, to));
  return to;
}

// ---------------------------------------------------------------------------------------------- unmounted root

/**
 * Swap the mirror for a new empty folder, run `sync --once`, and put the mirror back. It must exit 3 (the root
 * guard), trash nothing on either side, send no DELETE and write nothing into the new folder.
 */
export async function swappedRootRun(w: World): Promise<{ run: ChildRun; failures: string[] }> {
  const aside = join(w.dir, 'mirror-aside');
  const boxBefore = [...readBoxTree(w.web, w.remoteRootId).entries.keys()].sort().join('\n');
  const trashBefore = [...(await readFilesUnder(join(w.stateDir, 'trash'))).keys()].sort().join('\n');
  const localBefore = [...(await readLocalTree(w.mirror)).entries.keys()].sort().join('\n');
  await rename(w.mirror, aside);
  await mkdir(w.mirror);
  let run: ChildRun;
  let inNew: string[];
  try {
    run = await runChild(w, ['sync', '--once']);
  } finally {
    inNew = await readdir(w.mirror);
    await rm(w.mirror, { recursive: true, force: true });
    await rename(aside, w.mirror);
  }
  const failures: string[] = [];
  const f = (s: string): number => failures.push(`(unmounted root) ${s}`);
  if (run.code !== 3) f(`sync --once on a swapped root exited ${run.signal ?? run.code}, not 3`);
  if (inNew.length > 0) f(`it wrote into the new empty folder: ${inNew.map((n) => escapeText(n)).join(', ')}`);
  const deletes = run.requests.filter((q) => q.method === 'DELETE' && /^\/2\.0\/(files|folders)\//.test(q.path));
  if (deletes.length > 0) f(`it sent ${deletes.map((q) => `DELETE ${q.path} (${q.status})`).join(', ')}`);
  if (/^(?:FAILED )?(remote-trash|local-trash)\s/m.test(run.stderr)) f('its output names a trash operation');
  if ([...readBoxTree(w.web, w.remoteRootId).entries.keys()].sort().join('\n') !== boxBefore) f('the Box tree changed');
  if ([...(await readFilesUnder(join(w.stateDir, 'trash'))).keys()].sort().join('\n') !== trashBefore) f('the local trash changed');
  if ([...(await readLocalTree(w.mirror)).entries.keys()].sort().join('\n') !== localBefore) f('the mirror put back is not as it was');
  return { run, failures };
}

// ---------------------------------------------------------------------------------------------- revoked token

/**
 * Start the daemon on a converged world, wait until it is idle (a long poll answered), revoke every token, and
 * expect it to exit 1 within REVOKE_EXIT_MS having changed nothing on either side; then log in afresh.
 */
export async function revokedTokenRun(w: World): Promise<{ run: ChildRun; failures: string[] }> {
  const boxBefore = [...readBoxTree(w.web, w.remoteRootId).entries.keys()].sort().join('\n');
  const localBefore = [...(await readLocalTree(w.mirror)).entries.keys()].sort().join('\n');
  let revokedAt = 0;
  let idle = true;
  const run = await runChild(w, ['daemon'], {
    timeoutMs: 30_000 + REVOKE_EXIT_MS,
    during: async () => {
      const deadline = Date.now() + 30_000;
      while (!w.srv.control.requests().some((q) => q.path === '/subscribe' && q.status === 200)) {
        if (Date.now() > deadline) {
          idle = false;
          return;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      revokedAt = Date.now();
      w.srv.control.revokeAll();
    },
  });
  const endedAt = Date.now();
  await login(w.srv, join(w.stateDir, 'tokens.json'));
  const failures: string[] = [];
  const f = (s: string): number => failures.push(`(token revoked) ${s}`);
  if (!idle) f('the daemon never reached its long poll within 30 s');
  else if (run.code !== 1) f(`the daemon ended with ${run.signal ?? `exit ${run.code}`}, not exit 1`);
  else if (endedAt - revokedAt > REVOKE_EXIT_MS) f(`the daemon took ${endedAt - revokedAt} ms to exit after the revocation`);
  if ([...readBoxTree(w.web, w.remoteRootId).entries.keys()].sort().join('\n') !== boxBefore) f('the Box tree changed');
  if ([...(await readLocalTree(w.mirror)).entries.keys()].sort().join('\n') !== localBefore) f('the mirror changed');
  return { run, failures };
}

/** Delete a deep chain's top folder locally once its scenario passed (the next scenario's runs carry it to Box). */
export async function dropDeepChain(w: World, top: string): Promise<void> {
  await rm(join(w.mirror, top), { recursive: true, force: true });
}

// ---------------------------------------------------------------------------------------------- unreadable entry

/** Give what the CLI reads and writes (the world's folder itself, the mirror, state, home and config) to `as`. */
function lend(w: World, as: RunAs): void {
  lchownSync(w.dir, as.uid, as.gid);
  for (const p of [w.mirror, w.stateDir, w.home, w.configFile]) giveTo(p, as);
}

/** Scenarios after which an entry is made unreadable for two runs (drawn from a stream of its own). */
export const UNREADABLE_RATE = 0.05;

/**
 * On a converged world: make one synced file or folder mode 000 and add a new readable file beside it, then run
 * `sync --once` as an unprivileged user (root reads a mode-000 entry) over the world given to that user. That run
 * must exit 1 with the entry PARKED (escaped), upload the new file, send no DELETE and leave every Box item that
 * was there; after the mode is put back, the next run as that user exits 0 with nothing parked. The world is given
 * back to root afterwards. Null when the world holds no synced entry outside `excluded`.
 */
export async function unreadableRun(
  w: World,
  rng: Rng,
  contents: Contents,
  as: RunAs,
  excluded: string | null,
): Promise<{ runs: ChildRun[]; failures: string[]; line: string } | null> {
  const local = await readLocalTree(w.mirror);
  const box = readBoxTree(w.web, w.remoteRootId).entries;
  const under = (p: string): boolean => excluded !== null && (p === excluded || p.startsWith(`${excluded}/`));
  const candidates = [...local.entries.keys()].filter((p) => box.has(p) && !under(p)).sort();
  if (candidates.length === 0) return null;
  const target = candidates[rng.int(0, candidates.length - 1)]!;
  const abs = join(w.mirror, target);
  const mode = lstatSync(abs).mode & 0o7777;
  const isDir = local.entries.get(target)!.kind === 'dir';
  const fresh = `readable-${rng.hex(6)}.txt`;
  const data = contents.make(rng, `local create ${fresh} (beside an unreadable entry)`);
  await writeFile(join(w.mirror, fresh), data);
  // A synced file that did not change is not read at all (its stat matches the journal): edited first, it must be.
  const edit = isDir ? null : contents.make(rng, `local edit ${target} (then made unreadable)`);
  if (edit !== null) await writeFile(abs, edit);
  const boxBefore = [...box.keys()];
  const failures: string[] = [];
  const f = (s: string): number => failures.push(`(unreadable entry) ${s}`);
  const runs: ChildRun[] = [];
  try {
    chmodSync(abs, 0o000);
    lend(w, as);
    const first = await runChild(w, ['sync', '--once'], { as });
    runs.push(first);
    const parked = parkedLines(first.stderr);
    if (first.code !== 1) f(`sync --once as uid ${as.uid} with ${escapeText(target)} mode 000 exited ${first.signal ?? first.code}, not 1`);
    if (!parked.some((l) => l.startsWith(`  PARKED ${escapeText(target)}: `) && l.includes('EACCES'))) f(`its PARKED lines do not name ${escapeText(target)} with EACCES: ${JSON.stringify(parked)}`);
    const deletes = first.requests.filter((q) => q.method === 'DELETE' && /^\/2\.0\/(files|folders)\//.test(q.path));
    if (deletes.length > 0) f(`it sent ${deletes.map((q) => `DELETE ${q.path} (${q.status})`).join(', ')}`);
    const boxAfter = readBoxTree(w.web, w.remoteRootId).entries;
    const lost = boxBefore.filter((p) => !boxAfter.has(p));
    if (lost.length > 0) f(`Box lost ${lost.map((p) => escapeText(p)).join(', ')}`);
    const up = boxAfter.get(fresh);
    if (up?.kind !== 'file' || up.sha1 !== sha1Of(data)) f(`the new file ${fresh} beside it did not reach Box in that run`);
    chmodSync(abs, mode);
    const second = await runChild(w, ['sync', '--once'], { as });
    runs.push(second);
    if (second.code !== 0 || parkedLines(second.stderr).length > 0) f(`after chmod ${mode.toString(8)}, sync --once exited ${second.signal ?? second.code} with ${parkedLines(second.stderr).length} PARKED line(s), not 0 and none`);
    const edited = readBoxTree(w.web, w.remoteRootId).entries.get(target);
    if (edit !== null && (edited?.kind !== 'file' || edited.sha1 !== sha1Of(edit))) f(`the edit of ${escapeText(target)} made before it became unreadable did not reach Box once it was readable again`);
  } finally {
    chmodSync(abs, mode);
    lend(w, { uid: 0, gid: 0 });
  }
  return {
    runs,
    failures,
    line: `disk fault: ${isDir ? 'folder' : 'file'} ${escapeText(target)} ${isDir ? '' : 'edited, '}made mode 000 and a new file ${fresh} beside it; two runs as uid ${as.uid}: ${runs.map((r) => `exit ${r.signal ?? r.code}`).join(', ')} (the mode put back between them)`,
  };
}
