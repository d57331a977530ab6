/**
 * The invariants checked after every scenario, from the disk and from box-server ((g) also reads boxsync's
 * journal, to check it against both):
 *   (a) the local tree and the Box tree are equal: same relative paths, same SHA-1 per file; a local name that
 *       is not UTF-8 is left out only when the simulation made it on purpose (test/sim/disk-faults.ts: boxsync must
 *       park it, report it on every run, never upload or delete it);
 *   (b) every content that existed on either side when a sync started is still recoverable: in the mirror
 *       (conflict copies included), on Box (a current file, an old or deleted version, the trash), or in
 *       boxsync's local trash (<stateDir>/trash);
 *   (c) no boxsync temp file is left, and no file under a final name holds a content nobody wrote (a partial
 *       download or upload);
 *   (d) nothing outside the mirror and the state dir changed.
 * (e), upload sessions interrupted by a kill are resumed and not restarted, is checked in sim.ts from the request log.
 *   (f) a change of scope (a path excluded in the config, or included again) is never a delete: in the runs after
 *       it, nothing at or below that path is trashed on Box or moved to the local trash (scopeDeletes). While a path
 *       is excluded, (a) leaves it out: its two sides are not synced.
 *   (g) no path is forgotten (issue 26 point 14): at quiescence (the last `sync --once` exited 0, so no pass is
 *       scheduled), every path that differs between the disk, boxsync's journal and Box is parked with a reason (a
 *       failure row). Read from the journal file (engine/out-of-sync.ts: local row, merge base and remote row
 *       agree) and against the disk and Box (each merge base names what is there).
 */
import * as nodeFs from 'node:fs';
import ignore from 'ignore';
import { lstat, readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { readBoxRecoverable, readBoxTree, readFilesUnder, readLocalTree, sha1Of, type Entry } from './trees.js';
import type { World } from './world.js';
import type { RecordedRequest } from '../../src/box-server/index.js';
import { loadConfig } from '../../src/config/index.js';
import { outOfSync } from '../../src/engine/out-of-sync.js';
import { openJournal } from '../../src/journal/index.js';
import { loadIgnoreMatcher } from '../../src/local/ignore.js';

/** Contents that must stay recoverable: sha1 -> where and when it was seen at the start of a sync. */
export type Required = Map<string, string>;

/**
 * Record every content on both sides now (called right before each sync starts), except below the path the config
 * excludes: boxsync does not sync it, so a user's own edit or deletion there is not boxsync's to undo.
 */
export async function noteRequired(w: World, required: Required, when: string, excluded: string | null = null): Promise<void> {
  const skip = underExcluded(excluded);
  const l = await readLocalTree(w.mirror);
  for (const [p, e] of l.entries) if (e.kind === 'file' && !required.has(e.sha1) && !skip(p)) required.set(e.sha1, `local ${p}, ${when}`);
  const b = readBoxTree(w.web, w.remoteRootId);
  for (const [p, e] of b.entries) if (e.kind === 'file' && !required.has(e.sha1) && !skip(p)) required.set(e.sha1, `Box ${p}, ${when}`);
}

/** A fingerprint of everything outside the mirror and the state dir that the simulation watches. */
export async function outsideFingerprint(w: World): Promise<string> {
  const lines: string[] = [];
  const top = (await readdir(w.dir)).sort();
  lines.push(`top: ${top.join(',')}`);
  for (const root of [w.home, w.outside]) {
    for (const d of (await readdir(root, { recursive: true, withFileTypes: true })).sort((a, b) => (join(a.parentPath, a.name) < join(b.parentPath, b.name) ? -1 : 1))) {
      const p = join(d.parentPath, d.name);
      const s = await stat(p);
      lines.push(`${relative(w.dir, p)} ${d.isDirectory() ? 'dir' : sha1Of(await readFile(p))} mode=${(s.mode & 0o7777).toString(8)} mtime=${s.mtimeMs}`);
    }
    const s = await stat(root);
    lines.push(`${relative(w.dir, root)} mode=${(s.mode & 0o7777).toString(8)} mtime=${s.mtimeMs}`);
  }
  const c = await stat(w.configFile);
  lines.push(`config ${sha1Of(await readFile(w.configFile))} mode=${(c.mode & 0o7777).toString(8)} mtime=${c.mtimeMs}`);
  const d = await stat(w.dir);
  lines.push(`world dir mode=${(d.mode & 0o7777).toString(8)}`);
  return lines.join('\n');
}

export interface CheckResult {
  readonly failures: string[];
  readonly local: Map<string, Entry>;
  readonly box: Map<string, Entry>;
}

/**
 * Is a path at or below the one an anchored config exclude `/<path>` names? The same gitignore semantics boxsync
 * uses (the `ignore` package: case-insensitive), asked of the path and each of its folders.
 */
export function underExcluded(excluded: string | null): (p: string) => boolean {
  if (excluded === null) return () => false;
  const ig = ignore().add(`/${excluded}`);
  return (p) => {
    const parts = p.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const a = parts.slice(0, i).join('/');
      if (ig.ignores(a) || ig.ignores(`${a}/`)) return true;
    }
    return false;
  };
}

/** The Box ids at or below a path of the scope change, before the runs (the ones no run may trash). */
export function boxIdsUnder(w: World, under: (p: string) => boolean): Map<string, string> {
  const out = new Map<string, string>();
  for (const [p, ref] of readBoxTree(w.web, w.remoteRootId).ids) if (under(p)) out.set(ref.id, p);
  return out;
}

/**
 * (f) The runs after a change of scope of `path` deleted nothing at or below it: no trash operation in their
 * output (one line per operation on stderr) and no DELETE of one of those Box items in their requests.
 */
export function scopeDeletes(path: string, runs: readonly { stderr: string; requests: readonly RecordedRequest[] }[], ids: ReadonlyMap<string, string>): string[] {
  const under = underExcluded(path);
  const out: string[] = [];
  for (const [i, r] of runs.entries()) {
    for (const m of r.stderr.matchAll(/^(?:FAILED )?(remote-trash|local-trash)\s+(.+?)  \(/gm)) {
      if (under(m[2]!)) out.push(`(f) run ${i + 1} after the scope change of /${path}: ${m[1]} ${m[2]}`);
    }
    for (const q of r.requests) {
      const id = q.method === 'DELETE' ? /^\/2\.0\/(?:files|folders)\/([^/]+)$/.exec(q.path)?.[1] : undefined;
      if (id !== undefined && ids.has(id)) out.push(`(f) run ${i + 1} after the scope change of /${path}: DELETE of Box item ${id} (${ids.get(id)}) answered ${q.status}`);
    }
  }
  return out;
}

export async function checkInvariants(
  w: World,
  o: { required: Required; written: Map<string, string>; outsideBefore: string; excluded?: string | null; parked?: ReadonlySet<string> },
): Promise<CheckResult> {
  const failures: string[] = [];
  const l = await readLocalTree(w.mirror);
  const b = readBoxTree(w.web, w.remoteRootId);
  // (a) leaves out what is excluded: those two sides are not synced.
  const excluded = underExcluded(o.excluded ?? null);

  // (a) equal trees
  for (const [p, e] of l.entries) {
    if (excluded(p)) continue;
    const x = b.entries.get(p);
    if (!x) failures.push(`(a) ${p}${e.kind === 'dir' ? '/' : ''} is in the mirror but not on Box`);
    else if (x.kind !== e.kind) failures.push(`(a) ${p} is a ${e.kind} in the mirror but a ${x.kind} on Box`);
    else if (e.kind === 'file' && x.kind === 'file' && e.sha1 !== x.sha1) failures.push(`(a) ${p} differs: mirror ${e.sha1.slice(0, 10)}, Box ${x.sha1.slice(0, 10)}`);
  }
  for (const [p, e] of b.entries) if (!l.entries.has(p) && !excluded(p)) failures.push(`(a) ${p}${e.kind === 'dir' ? '/' : ''} is on Box but not in the mirror`);
  for (const [p, ref] of b.ids) if (ref.type === 'web_link') failures.push(`(a) unexpected web link on Box at ${p}`);
  if (l.odd.length > 0) failures.push(`(a) neither file nor folder in the mirror: ${l.odd.join(', ')}`);
  // A name that is not UTF-8 is an expected, reported difference only when the simulation made it (disk-faults.ts
  // checks that each run reported it parked); any other one is a name boxsync wrote.
  for (const u of l.undecodable) if (!o.parked?.has(u)) failures.push(`(a) a name that is not UTF-8 in the mirror: ${JSON.stringify(u)}`);

  // (b) every required content is recoverable
  const where = new Map<string, string>();
  for (const [p, e] of l.entries) if (e.kind === 'file') where.set(e.sha1, `mirror ${p}`);
  for (const [sha, at] of await readFilesUnder(join(w.stateDir, 'trash'))) if (!where.has(sha)) where.set(sha, `local trash ${at}`);
  for (const [sha, at] of readBoxRecoverable(w.boxDataDir)) if (!where.has(sha)) where.set(sha, at);
  for (const [sha, seen] of o.required) {
    if (!where.has(sha)) failures.push(`(b) content ${sha.slice(0, 10)} (${o.written.get(sha) ?? 'not written by the simulation'}; seen at ${seen}) is nowhere: not in the mirror, on Box, or in the local trash`);
  }

  // (c) no temp files, no content nobody wrote under a final name
  for (const t of l.temps) failures.push(`(c) boxsync temp file left in the mirror: ${t}`);
  for (const [p, e] of l.entries) if (e.kind === 'file' && !o.written.has(e.sha1)) failures.push(`(c) mirror ${p} holds a content nobody wrote (${e.sha1.slice(0, 10)}, ${e.size} bytes): partial?`);
  for (const [p, e] of b.entries) if (e.kind === 'file' && !o.written.has(e.sha1)) failures.push(`(c) Box ${p} holds a content nobody wrote (${e.sha1.slice(0, 10)}): partial upload?`);

  // (d) nothing outside the mirror and the state dir changed
  const outsideAfter = await outsideFingerprint(w);
  if (outsideAfter !== o.outsideBefore) failures.push(`(d) something outside the mirror and the state dir changed:\n--- before\n${o.outsideBefore}\n--- after\n${outsideAfter}`);

  // (g) nothing out of sync at quiescence unless parked with a reason
  failures.push(...(await forgottenPaths(w, l.entries, b.ids)));

  return { failures, local: l.entries, box: b.entries };
}

/** (g): paths that differ between the disk, the journal and Box, with no failure row saying why. */
export async function forgottenPaths(w: World, local: Map<string, Entry>, boxIds: Map<string, { readonly id: string }>): Promise<string[]> {
  const out: string[] = [];
  const config = await loadConfig({ path: w.configFile, env: w.env });
  const { journal } = openJournal(join(w.stateDir, 'journal.db'));
  try {
    for (const root of config.folders) {
      const isIgnored = await loadIgnoreMatcher(nodeFs, root.localPath, root.exclude);
      const parked = new Map(journal.failures(root.id).map((f) => [f.path as string, f.message]));
      const forgotten = (path: string, why: string): void => {
        if (!parked.get(path)) out.push(`(g) ${path}: ${why}, and no failure row says why (nothing would plan it)`);
      };
      for (const o of outOfSync(journal, root, isIgnored, 50)) forgotten(o.path, `out of sync in the journal (${o.why})`);
      for (const sy of journal.syncedUnder(root.id, '')) {
        const onDisk = local.get(sy.path);
        if (!onDisk) {
          if (!isIgnored(sy.path, sy.kind === 'folder')) forgotten(sy.path, 'the journal holds it as synced, the disk does not have it');
          continue;
        }
        if (boxIds.get(sy.path)?.id !== sy.remoteId) forgotten(sy.path, `the journal holds it as synced with Box item ${sy.remoteId}, Box has ${boxIds.get(sy.path)?.id ?? 'nothing'} there`);
        if (sy.kind === 'file' && onDisk.kind === 'file') {
          const st = await lstat(join(root.localPath, sy.path));
          if (st.ino !== sy.inode || st.size !== sy.sizeBytes || Math.trunc(st.mtimeMs) !== Math.trunc(sy.mtimeMs)) {
            forgotten(sy.path, 'the disk changed since the journal\'s merge base and nothing planned it');
          }
        }
      }
    }
  } finally {
    journal.close();
  }
  return out;
}
