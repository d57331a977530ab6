/**
 * Random user operations on both sides: the local side with node:fs in the mirror, the Box side with
 * box-server's control actor (a "web user"). Operations pick their targets from the trees as they are now, so
 * there is no model to drift from reality. Every content written is registered with `Contents`.
 *
 * Each operation returns one line for the scenario's log, or null when it found nothing to act on.
 */
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Rng } from './prng.js';
import { readBoxTree, readLocalTree, sha1Of, type Entry } from './trees.js';
import { setExclude, type World } from './world.js';

/** Every content the simulation ever wrote, on either side: sha1 -> a description. */
export class Contents {
  readonly written = new Map<string, string>();
  private counter = 0;

  constructor(private readonly tag: string) {}

  /** A fresh content: tiny, sometimes a few hundred KB, and `big` for an upload session (>= 20 MB). */
  make(rng: Rng, what: string, big = false): Buffer {
    this.counter += 1;
    const head = `sim ${this.tag} #${this.counter} ${rng.hex(8)}\n`;
    let data: Buffer;
    if (big) {
      const block = Buffer.alloc(65_536);
      for (let i = 0; i < block.length; i += 4) block.writeUInt32LE(Math.floor(rng.next() * 4294967296), i);
      const size = 20_000_000 + rng.int(0, 3_000_000);
      data = Buffer.alloc(size);
      for (let off = 0; off < size; off += block.length) block.copy(data, off);
      data.write(head, 0);
    } else if (rng.chance(0.15)) {
      const size = rng.int(20_000, 300_000);
      data = Buffer.alloc(size, head);
    } else {
      data = Buffer.from(head.repeat(rng.int(1, 3)));
    }
    this.written.set(sha1Of(data), `${what} (#${this.counter}, ${data.length} bytes)`);
    return data;
  }
}

export interface OpContext {
  readonly w: World;
  readonly rng: Rng;
  readonly contents: Contents;
  /** Items this world trashed on Box (candidates for a restore). */
  readonly trashed: Array<{ type: 'file' | 'folder'; id: string; path: string }>;
  /** Allow the rare >= 20 MB file (upload sessions). */
  readonly bigFiles: boolean;
}

const FILE_BASES = ['a', 'b', 'notes', 'Report', 'v1.2', 'data', 'x'];
const FILE_EXTS = ['.txt', '.md', '.bin', ''];
const DIR_NAMES = ['d', 'docs', 'Sub', 'photos', 'x2'];
const MAX_DEPTH = 3;
const MAX_FILES = 14;

const depth = (p: string): number => (p === '' ? 0 : p.split('/').length);
const parentOf = (p: string): string => (p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : '');
const baseOf = (p: string): string => p.slice(p.lastIndexOf('/') + 1);
const joinRel = (dir: string, name: string): string => (dir === '' ? name : `${dir}/${name}`);

/** Names already used in `dir` (case-insensitively, as Box compares them). */
function siblingsKey(entries: Map<string, Entry>, dir: string): Set<string> {
  const out = new Set<string>();
  for (const p of entries.keys()) if (parentOf(p) === dir) out.add(baseOf(p).toLowerCase());
  return out;
}

function freshName(rng: Rng, entries: Map<string, Entry>, dir: string, kind: 'file' | 'dir'): string | null {
  const taken = siblingsKey(entries, dir);
  for (let i = 0; i < 8; i++) {
    const name = kind === 'dir' ? rng.pick(DIR_NAMES) + (i > 3 ? String(i) : '') : rng.pick(FILE_BASES) + (i > 3 ? String(i) : '') + rng.pick(FILE_EXTS);
    if (!taken.has(name.toLowerCase())) return name;
  }
  return null;
}

/** The same name in another case (toggle the first letter; upper-case all when it has no letter to toggle). */
function otherCase(name: string): string | null {
  const i = name.search(/[a-zA-Z]/);
  if (i < 0) return null;
  const c = name[i]!;
  const flipped = c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase();
  return name.slice(0, i) + flipped + name.slice(i + 1);
}

function dirsOf(entries: Map<string, Entry>): string[] {
  return ['', ...[...entries].filter(([, e]) => e.kind === 'dir').map(([p]) => p)];
}
function filesOf(entries: Map<string, Entry>): string[] {
  return [...entries].filter(([, e]) => e.kind === 'file').map(([p]) => p);
}
function itemsOf(entries: Map<string, Entry>): string[] {
  return [...entries.keys()];
}

// ---------------------------------------------------------------------------------------------- local side

async function local(ctx: OpContext) {
  return (await readLocalTree(ctx.w.mirror)).entries;
}
const abs = (ctx: OpContext, rel: string): string => join(ctx.w.mirror, rel);

async function localCreate(ctx: OpContext): Promise<string | null> {
  const e = await local(ctx);
  const dir = ctx.rng.pick(dirsOf(e));
  const name = freshName(ctx.rng, e, dir, 'file');
  if (name === null) return null;
  const big = ctx.bigFiles && ctx.rng.chance(0.25);
  const p = joinRel(dir, name);
  const data = ctx.contents.make(ctx.rng, `local create ${p}`, big);
  await writeFile(abs(ctx, p), data);
  return `local: create ${p} (${data.length} bytes, ${sha1Of(data).slice(0, 10)})`;
}

async function localEdit(ctx: OpContext, path?: string): Promise<string | null> {
  const e = await local(ctx);
  const files = filesOf(e);
  if (files.length === 0) return null;
  const p = path ?? ctx.rng.pick(files);
  const big = ctx.bigFiles && ctx.rng.chance(0.15);
  const data = ctx.contents.make(ctx.rng, `local edit ${p}`, big);
  await writeFile(abs(ctx, p), data);
  return `local: edit ${p} (${data.length} bytes, ${sha1Of(data).slice(0, 10)})`;
}

async function localMkdir(ctx: OpContext): Promise<string | null> {
  const e = await local(ctx);
  const dir = ctx.rng.pick(dirsOf(e).filter((d) => depth(d) < MAX_DEPTH));
  const name = freshName(ctx.rng, e, dir, 'dir');
  if (name === null) return null;
  const p = joinRel(dir, name);
  await mkdir(abs(ctx, p));
  let note = '';
  if (ctx.rng.chance(0.6)) {
    const f = joinRel(p, `${ctx.rng.pick(FILE_BASES)}${ctx.rng.pick(FILE_EXTS)}`);
    const data = ctx.contents.make(ctx.rng, `local create ${f}`);
    await writeFile(abs(ctx, f), data);
    note = ` with ${f} (${sha1Of(data).slice(0, 10)})`;
  }
  return `local: mkdir ${p}${note}`;
}

async function localRename(ctx: OpContext, caseOnly: boolean): Promise<string | null> {
  const e = await local(ctx);
  const items = itemsOf(e);
  if (items.length === 0) return null;
  const p = ctx.rng.pick(items);
  const kind = e.get(p)!.kind;
  let name: string | null;
  if (caseOnly) {
    name = otherCase(baseOf(p));
  } else {
    name = freshName(ctx.rng, e, parentOf(p), kind);
  }
  if (name === null) return null;
  const to = joinRel(parentOf(p), name);
  await rename(abs(ctx, p), abs(ctx, to));
  return `local: ${caseOnly ? 'case-only rename' : 'rename'} ${p}${kind === 'dir' ? '/' : ''} -> ${to}`;
}

async function localMove(ctx: OpContext): Promise<string | null> {
  const e = await local(ctx);
  const items = itemsOf(e);
  if (items.length === 0) return null;
  const p = ctx.rng.pick(items);
  const kind = e.get(p)!.kind;
  const targets = dirsOf(e).filter((d) => d !== parentOf(p) && d !== p && !d.startsWith(`${p}/`) && (kind === 'file' || depth(d) < MAX_DEPTH));
  if (targets.length === 0) return null;
  const dir = ctx.rng.pick(targets);
  let name = baseOf(p);
  if (siblingsKey(e, dir).has(name.toLowerCase())) {
    const n = freshName(ctx.rng, e, dir, kind);
    if (n === null) return null;
    name = n;
  }
  const to = joinRel(dir, name);
  await rename(abs(ctx, p), abs(ctx, to));
  return `local: move ${p}${kind === 'dir' ? '/' : ''} -> ${to}`;
}

async function localDelete(ctx: OpContext): Promise<string | null> {
  const e = await local(ctx);
  const items = itemsOf(e);
  if (items.length === 0) return null;
  const p = ctx.rng.pick(items);
  await rm(abs(ctx, p), { recursive: true });
  return `local: delete ${p}${e.get(p)!.kind === 'dir' ? '/' : ''}`;
}

async function localTypeChange(ctx: OpContext): Promise<string | null> {
  const e = await local(ctx);
  const items = itemsOf(e).filter((p) => e.get(p)!.kind === 'file' || depth(p) < MAX_DEPTH);
  if (items.length === 0) return null;
  const p = ctx.rng.pick(items);
  if (e.get(p)!.kind === 'file') {
    await rm(abs(ctx, p));
    await mkdir(abs(ctx, p));
    const f = joinRel(p, 'inner.txt');
    const data = ctx.contents.make(ctx.rng, `local create ${f}`);
    await writeFile(abs(ctx, f), data);
    return `local: type change ${p} file -> folder (with ${f})`;
  }
  await rm(abs(ctx, p), { recursive: true });
  const data = ctx.contents.make(ctx.rng, `local create ${p}`);
  await writeFile(abs(ctx, p), data);
  return `local: type change ${p}/ folder -> file (${sha1Of(data).slice(0, 10)})`;
}

// ---------------------------------------------------------------------------------------------- Box side

function box(ctx: OpContext) {
  return readBoxTree(ctx.w.web, ctx.w.remoteRootId);
}
const folderIdOf = (ctx: OpContext, ids: Map<string, { id: string }>, dir: string): string => (dir === '' ? ctx.w.remoteRootId : ids.get(dir)!.id);

/** Run a Box action; a refusal from box-server (a name taken, say) is logged, not thrown. */
function attempt(line: string, fn: () => void): string {
  try {
    fn();
    return `box: ${line}`;
  } catch (e) {
    return `box: ${line} -> refused (${(e as Error).message.split('\n')[0]})`;
  }
}

function boxCreate(ctx: OpContext): string | null {
  const { entries, ids } = box(ctx);
  const dir = ctx.rng.pick(dirsOf(entries));
  const name = freshName(ctx.rng, entries, dir, 'file');
  if (name === null) return null;
  const big = ctx.bigFiles && ctx.rng.chance(0.25);
  const p = joinRel(dir, name);
  const data = ctx.contents.make(ctx.rng, `box create ${p}`, big);
  return attempt(`create ${p} (${data.length} bytes, ${sha1Of(data).slice(0, 10)})`, () => ctx.w.web.uploadFile(folderIdOf(ctx, ids, dir), name, data));
}

function boxEdit(ctx: OpContext, path?: string): string | null {
  const { entries, ids } = box(ctx);
  const files = filesOf(entries);
  if (files.length === 0) return null;
  const p = path ?? ctx.rng.pick(files);
  if (!ids.has(p)) return null;
  const data = ctx.contents.make(ctx.rng, `box edit ${p}`, ctx.bigFiles && ctx.rng.chance(0.15));
  return attempt(`edit ${p} (${data.length} bytes, ${sha1Of(data).slice(0, 10)})`, () => ctx.w.web.uploadVersion(ids.get(p)!.id, data));
}

function boxMkdir(ctx: OpContext): string | null {
  const { entries, ids } = box(ctx);
  const dir = ctx.rng.pick(dirsOf(entries).filter((d) => depth(d) < MAX_DEPTH));
  const name = freshName(ctx.rng, entries, dir, 'dir');
  if (name === null) return null;
  const p = joinRel(dir, name);
  let note = '';
  const line = attempt(`mkdir ${p}`, () => {
    const f = ctx.w.web.createFolder(folderIdOf(ctx, ids, dir), name);
    if (ctx.rng.chance(0.6)) {
      const fname = `${ctx.rng.pick(FILE_BASES)}${ctx.rng.pick(FILE_EXTS)}`;
      const data = ctx.contents.make(ctx.rng, `box create ${p}/${fname}`);
      ctx.w.web.uploadFile(f.id, fname, data);
      note = ` with ${p}/${fname} (${sha1Of(data).slice(0, 10)})`;
    }
  });
  return line + note;
}

function boxRename(ctx: OpContext, caseOnly: boolean): string | null {
  const { entries, ids } = box(ctx);
  const items = itemsOf(entries);
  if (items.length === 0) return null;
  const p = ctx.rng.pick(items);
  const kind = entries.get(p)!.kind;
  const name = caseOnly ? otherCase(baseOf(p)) : freshName(ctx.rng, entries, parentOf(p), kind);
  if (name === null) return null;
  const ref = ids.get(p)!;
  return attempt(`${caseOnly ? 'case-only rename' : 'rename'} ${p}${kind === 'dir' ? '/' : ''} -> ${joinRel(parentOf(p), name)}`, () =>
    ctx.w.web.rename(ref.type as 'file' | 'folder', ref.id, name),
  );
}

function boxMove(ctx: OpContext): string | null {
  const { entries, ids } = box(ctx);
  const items = itemsOf(entries);
  if (items.length === 0) return null;
  const p = ctx.rng.pick(items);
  const kind = entries.get(p)!.kind;
  const targets = dirsOf(entries).filter((d) => d !== parentOf(p) && d !== p && !d.startsWith(`${p}/`) && (kind === 'file' || depth(d) < MAX_DEPTH));
  if (targets.length === 0) return null;
  const dir = ctx.rng.pick(targets);
  let name = baseOf(p);
  if (siblingsKey(entries, dir).has(name.toLowerCase())) {
    const n = freshName(ctx.rng, entries, dir, kind);
    if (n === null) return null;
    name = n;
  }
  const ref = ids.get(p)!;
  return attempt(`move ${p}${kind === 'dir' ? '/' : ''} -> ${joinRel(dir, name)}`, () => ctx.w.web.move(ref.type as 'file' | 'folder', ref.id, folderIdOf(ctx, ids, dir), name));
}

function boxTrash(ctx: OpContext, path?: string): string | null {
  const { entries, ids } = box(ctx);
  const items = itemsOf(entries);
  if (items.length === 0) return null;
  const p = path ?? ctx.rng.pick(items);
  const ref = ids.get(p);
  if (!ref || ref.type === 'web_link') return null;
  const type = ref.type;
  return attempt(`trash ${p}${type === 'folder' ? '/' : ''}`, () => {
    ctx.w.web.trash(type, ref.id);
    ctx.trashed.push({ type, id: ref.id, path: p });
  });
}

function boxRestore(ctx: OpContext): string | null {
  if (ctx.trashed.length === 0) return null;
  const i = ctx.rng.int(0, ctx.trashed.length - 1);
  const t = ctx.trashed[i]!;
  ctx.trashed.splice(i, 1);
  return attempt(`restore ${t.type} ${t.id} (trashed from ${t.path})`, () => ctx.w.web.restore(t.type, t.id));
}

function boxTypeChange(ctx: OpContext): string | null {
  const { entries, ids } = box(ctx);
  const items = itemsOf(entries).filter((p) => entries.get(p)!.kind === 'file' || depth(p) < MAX_DEPTH);
  if (items.length === 0) return null;
  const p = ctx.rng.pick(items);
  const ref = ids.get(p)!;
  const parentId = folderIdOf(ctx, ids, parentOf(p));
  if (ref.type === 'file') {
    return attempt(`type change ${p} file -> folder (with ${p}/inner.txt)`, () => {
      ctx.w.web.trash('file', ref.id);
      ctx.trashed.push({ type: 'file', id: ref.id, path: p });
      const f = ctx.w.web.createFolder(parentId, baseOf(p));
      ctx.w.web.uploadFile(f.id, 'inner.txt', ctx.contents.make(ctx.rng, `box create ${p}/inner.txt`));
    });
  }
  if (ref.type !== 'folder') return null;
  return attempt(`type change ${p}/ folder -> file`, () => {
    ctx.w.web.trash('folder', ref.id);
    ctx.trashed.push({ type: 'folder', id: ref.id, path: p });
    ctx.w.web.uploadFile(parentId, baseOf(p), ctx.contents.make(ctx.rng, `box create ${p}`));
  });
}

// ---------------------------------------------------------------------------------------------- both sides

/** Paths that are files with the same content on both sides (in sync), optionally only under a folder. */
async function syncedFiles(ctx: OpContext): Promise<string[]> {
  const l = await local(ctx);
  const b = box(ctx).entries;
  return filesOf(l).filter((p) => {
    const x = b.get(p);
    return x?.kind === 'file' && x.sha1 === (l.get(p) as { sha1: string }).sha1;
  });
}

async function bothEdit(ctx: OpContext): Promise<string | null> {
  const files = await syncedFiles(ctx);
  if (files.length === 0) return null;
  const p = ctx.rng.pick(files);
  const a = await localEdit(ctx, p);
  const b = boxEdit(ctx, p);
  return `both: edit ${p} on both sides\n    ${a}\n    ${b}`;
}

async function editWhileTrashed(ctx: OpContext): Promise<string | null> {
  const files = await syncedFiles(ctx);
  if (files.length === 0) return null;
  const p = ctx.rng.pick(files);
  const b = boxTrash(ctx, p);
  const a = await localEdit(ctx, p);
  return `both: edit ${p} locally while it is trashed on Box\n    ${b}\n    ${a}`;
}

async function editWhileFolderTrashed(ctx: OpContext): Promise<string | null> {
  const files = (await syncedFiles(ctx)).filter((p) => p.includes('/'));
  if (files.length === 0) return null;
  const p = ctx.rng.pick(files);
  const b = boxTrash(ctx, parentOf(p));
  const a = await localEdit(ctx, p);
  return `both: edit ${p} locally while its folder is trashed on Box\n    ${b}\n    ${a}`;
}

async function caseRenameVsEdit(ctx: OpContext): Promise<string | null> {
  const files = await syncedFiles(ctx);
  if (files.length === 0) return null;
  const p = ctx.rng.pick(files);
  const name = otherCase(baseOf(p));
  if (name === null) return null;
  const to = joinRel(parentOf(p), name);
  const b = boxEdit(ctx, p);
  await rename(abs(ctx, p), abs(ctx, to));
  let moved = '';
  const parent = parentOf(p);
  if (parent !== '' && ctx.rng.chance(0.5)) {
    const l = await local(ctx);
    const dest = freshName(ctx.rng, l, parentOf(parent), 'dir');
    if (dest !== null) {
      const target = joinRel(parentOf(parent), dest);
      await mkdir(dirname(abs(ctx, target)), { recursive: true });
      await rename(abs(ctx, parent), abs(ctx, target));
      moved = `\n    local: rename its folder ${parent}/ -> ${target}/`;
    }
  }
  return `both: case-only rename ${p} -> ${to} locally while it is edited on Box\n    ${b}${moved}`;
}

async function renameBoth(ctx: OpContext): Promise<string | null> {
  const files = await syncedFiles(ctx);
  if (files.length === 0) return null;
  const p = ctx.rng.pick(files);
  const l = await local(ctx);
  const n1 = freshName(ctx.rng, l, parentOf(p), 'file');
  const { entries, ids } = box(ctx);
  const n2 = freshName(ctx.rng, entries, parentOf(p), 'file');
  if (n1 === null || n2 === null) return null;
  await rename(abs(ctx, p), abs(ctx, joinRel(parentOf(p), n1)));
  const b = attempt(`rename ${p} -> ${joinRel(parentOf(p), n2)}`, () => ctx.w.web.rename('file', ids.get(p)!.id, n2));
  return `both: rename ${p} differently on each side\n    local: rename ${p} -> ${joinRel(parentOf(p), n1)}\n    ${b}`;
}

async function deleteVsEdit(ctx: OpContext): Promise<string | null> {
  const files = await syncedFiles(ctx);
  if (files.length === 0) return null;
  const p = ctx.rng.pick(files);
  const b = boxEdit(ctx, p);
  await rm(abs(ctx, p));
  return `both: delete ${p} locally while it is edited on Box\n    ${b}`;
}

type Op = (ctx: OpContext) => Promise<string | null> | string | null;

/** The operation table: [weight, name, op]. */
const OPS: ReadonlyArray<readonly [number, Op]> = [
  [10, localCreate],
  [10, (c) => localEdit(c)],
  [4, localMkdir],
  [5, (c) => localRename(c, false)],
  [4, (c) => localRename(c, true)],
  [5, localMove],
  [5, localDelete],
  [2, localTypeChange],
  [10, boxCreate],
  [10, (c) => boxEdit(c)],
  [4, boxMkdir],
  [5, (c) => boxRename(c, false)],
  [4, (c) => boxRename(c, true)],
  [5, boxMove],
  [5, (c) => boxTrash(c)],
  [3, boxRestore],
  [2, boxTypeChange],
  [5, bothEdit],
  [4, editWhileTrashed],
  [3, editWhileFolderTrashed],
  [4, caseRenameVsEdit],
  [3, renameBoth],
  [3, deleteVsEdit],
];

/** One random operation; trees that grew past MAX_FILES get edits and deletes instead of creates. */
export async function randomOp(ctx: OpContext): Promise<string | null> {
  const files = filesOf((await readLocalTree(ctx.w.mirror)).entries).length;
  const op = files >= MAX_FILES ? ctx.rng.pick<Op>([localDelete, (c) => boxTrash(c), (c) => localEdit(c), (c) => boxEdit(c)]) : ctx.rng.weighted(OPS);
  return op(ctx);
}

/**
 * A change of scope between runs (issue 27): exclude a top-level path of either tree in the config (`/docs`),
 * or include again the one excluded. `excluded` is the path excluded now (at most one at a time); returns the new
 * one and the log line, or null when there is nothing to exclude.
 */
export async function toggleExclude(ctx: OpContext, excluded: string | null): Promise<{ excluded: string | null; line: string } | null> {
  if (excluded !== null) {
    await setExclude(ctx.w, []);
    return { excluded: null, line: `scope: include /${excluded} again (its exclude removed from the config)` };
  }
  // Top-level paths only: a path below a synced folder would be carried along when boxsync moves that folder, and
  // an excluded path is scanned again only by the next run (not a delete; the simulation wants each run to converge).
  const paths = [...new Set([...(await local(ctx)).keys(), ...box(ctx).entries.keys()])].filter((p) => depth(p) === 1).sort();
  if (paths.length === 0) return null;
  const p = ctx.rng.pick(paths);
  await setExclude(ctx.w, [`/${p}`]);
  return { excluded: p, line: `scope: exclude /${p} in the config` };
}
