/**
 * The local trash: where boxsync puts local files and folders it "deletes". Deletions never unlink user data.
 *
 * Two modes:
 * - 'freedesktop': the desktop's own trash, `$XDG_DATA_HOME/Trash` (default ~/.local/share/Trash), as the
 *   freedesktop.org Trash specification describes: the item is renamed into `files/<name>` and
 *   `info/<name>.trashinfo` records its original absolute path and deletion time, so file managers can restore
 *   it. The .trashinfo is created first with O_EXCL, which is how the spec makes names unique. Only used when the
 *   item is on the same file system as that trash (the spec's per-volume trash dirs are not used); otherwise the
 *   item goes to the state trash.
 * - 'state': `<stateDir>/trash/<UTC date>/<entry>/<relpath>` where `<entry>` is `<epoch ms>-<random hex>`, and one
 *   JSON line per item in `<stateDir>/trash/<UTC date>/manifest.jsonl`:
 *   {"entry", "originalPath" (absolute), "relPath", "trashedAtMs", "trashedAt" (ISO)}.
 *   `purgeOlderThan` deletes state-trash entries older than the retention (default 30 days); the daemon calls it
 *   on a schedule. The freedesktop trash is the user's to empty.
 * A move to another file system (state dir on another disk) falls back to copy + verify + unlink.
 */
import { randomBytes } from 'node:crypto';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { Logger } from 'pino';
import type { RelPath } from '../core/model.js';
import { moveAcrossDevices } from './cross-device-move.js';
import { classifyFsError, errnoOf } from './fs-errors.js';
import type { FsModule } from './fs-module.js';

export type LocalTrashMode = 'freedesktop' | 'state';

export const DEFAULT_TRASH_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

export interface LocalTrashOptions {
  readonly mode: LocalTrashMode;
  /** boxsync's state directory; the state trash is `<stateDir>/trash`. */
  readonly stateDir: string;
  readonly fs: FsModule;
  /** Default: $XDG_DATA_HOME, else ~/.local/share. */
  readonly xdgDataHome?: string;
  /** Epoch ms; injected so tests can age entries. */
  readonly now?: () => number;
  readonly logger?: Logger;
}

export interface ManifestLine {
  readonly entry: string;
  readonly originalPath: string;
  readonly relPath: string;
  readonly trashedAtMs: number;
  readonly trashedAt: string;
}

export interface LocalTrash {
  /** Move the item at `absPath` (root-relative `relPath`) into the trash; returns its absolute new location. */
  trash(absPath: string, relPath: RelPath): Promise<string>;
  /** Remove state-trash entries trashed more than `ageMs` ago; returns how many entries were removed. */
  purgeOlderThan(ageMs?: number): Promise<number>;
}

const ENTRY_NAME = /^(\d+)-[0-9a-f]+$/;
const MANIFEST = 'manifest.jsonl';

export function createLocalTrash(opts: LocalTrashOptions): LocalTrash {
  const fs = opts.fs;
  const now = opts.now ?? Date.now;
  const stateTrash = join(opts.stateDir, 'trash');
  const xdgTrash = join(opts.xdgDataHome ?? process.env.XDG_DATA_HOME ?? join(homedir(), '.local', 'share'), 'Trash');

  async function rename(from: string, to: string): Promise<void> {
    try {
      await fs.promises.rename(from, to);
    } catch (e) {
      if (errnoOf(e) !== 'EXDEV') throw e;
      await moveAcrossDevices(fs, from, to);
    }
  }

  async function toStateTrash(absPath: string, relPath: RelPath): Promise<string> {
    const atMs = now();
    const iso = new Date(atMs).toISOString();
    const dayDir = join(stateTrash, iso.slice(0, 10));
    const entry = `${atMs}-${randomBytes(6).toString('hex')}`;
    const dest = join(dayDir, entry, relPath);
    await fs.promises.mkdir(dirname(dest), { recursive: true, mode: 0o700 });
    // The manifest line comes first: a crash in between leaves a line without content, never content without a line.
    const line: ManifestLine = { entry, originalPath: absPath, relPath, trashedAtMs: atMs, trashedAt: iso };
    await fs.promises.appendFile(join(dayDir, MANIFEST), `${JSON.stringify(line)}\n`, { mode: 0o600 });
    await rename(absPath, dest);
    return dest;
  }

  async function sameDevice(absPath: string, dir: string): Promise<boolean> {
    const item = await fs.promises.lstat(absPath);
    for (let d = dir; ; d = dirname(d)) {
      try {
        return (await fs.promises.stat(d)).dev === item.dev;
      } catch (e) {
        if (errnoOf(e) !== 'ENOENT' || dirname(d) === d) throw e;
      }
    }
  }

  async function toFreedesktopTrash(absPath: string, relPath: RelPath): Promise<string | undefined> {
    if (!(await sameDevice(absPath, xdgTrash))) {
      opts.logger?.info({ path: relPath }, 'not on the same file system as the desktop trash; using the boxsync state trash');
      return undefined;
    }
    const filesDir = join(xdgTrash, 'files');
    const infoDir = join(xdgTrash, 'info');
    await fs.promises.mkdir(filesDir, { recursive: true, mode: 0o700 });
    await fs.promises.mkdir(infoDir, { recursive: true, mode: 0o700 });
    const info = trashInfo(absPath, new Date(now()));
    const base = basename(absPath);
    for (let n = 1; ; n++) {
      const name = n === 1 ? base : `${base}.${n}`;
      const infoPath = join(infoDir, `${name}.trashinfo`);
      try {
        await fs.promises.writeFile(infoPath, info, { flag: 'wx', mode: 0o600 });
      } catch (e) {
        if (errnoOf(e) === 'EEXIST') continue;
        throw e;
      }
      const dest = join(filesDir, name);
      try {
        if ((await fs.promises.lstat(dest).catch(() => undefined)) !== undefined) throw Object.assign(new Error('taken'), { code: 'EEXIST' });
        await fs.promises.rename(absPath, dest);
        return dest;
      } catch (e) {
        await fs.promises.unlink(infoPath).catch(() => undefined);
        if (errnoOf(e) === 'EEXIST') continue;
        if (errnoOf(e) === 'EXDEV') return undefined;
        throw e;
      }
    }
  }

  return {
    async trash(absPath, relPath) {
      try {
        if (opts.mode === 'freedesktop') {
          const dest = await toFreedesktopTrash(absPath, relPath);
          if (dest !== undefined) return dest;
        }
        return await toStateTrash(absPath, relPath);
      } catch (e) {
        throw classifyFsError(e, { action: 'moving to the trash', path: relPath });
      }
    },

    async purgeOlderThan(ageMs = DEFAULT_TRASH_RETENTION_MS) {
      const cutoff = now() - ageMs;
      let removed = 0;
      for (const day of await readdirOrEmpty(fs, stateTrash)) {
        const dayDir = join(stateTrash, day);
        const entries = (await readdirOrEmpty(fs, dayDir)).filter((n) => ENTRY_NAME.test(n));
        const expired = new Set(entries.filter((n) => Number(ENTRY_NAME.exec(n)?.[1]) < cutoff));
        for (const n of expired) {
          await fs.promises.rm(join(dayDir, n), { recursive: true, force: true });
          removed++;
        }
        if (expired.size === 0) continue;
        if (expired.size === entries.length) {
          await fs.promises.rm(dayDir, { recursive: true, force: true });
          continue;
        }
        await rewriteManifest(fs, join(dayDir, MANIFEST), expired);
      }
      return removed;
    },
  };
}

/** The .trashinfo body: Path is the absolute path, URL-escaped per segment; DeletionDate is local time. */
export function trashInfo(absPath: string, at: Date): string {
  const path = absPath.split('/').map(encodeURIComponent).join('/');
  const pad = (n: number): string => String(n).padStart(2, '0');
  const date = `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(at.getHours())}:${pad(at.getMinutes())}:${pad(at.getSeconds())}`;
  return `[Trash Info]\nPath=${path}\nDeletionDate=${date}\n`;
}

async function readdirOrEmpty(fs: FsModule, dir: string): Promise<string[]> {
  try {
    return (await fs.promises.readdir(dir)).map(String);
  } catch (e) {
    if (errnoOf(e) === 'ENOENT') return [];
    throw e;
  }
}

async function rewriteManifest(fs: FsModule, path: string, drop: ReadonlySet<string>): Promise<void> {
  let text: string;
  try {
    text = await fs.promises.readFile(path, 'utf8');
  } catch (e) {
    if (errnoOf(e) === 'ENOENT') return;
    throw e;
  }
  const kept = text.split('\n').filter((l) => {
    if (l.trim() === '') return false;
    try {
      return !drop.has((JSON.parse(l) as ManifestLine).entry);
    } catch {
      return true;
    }
  });
  const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  await fs.promises.writeFile(tmp, kept.map((l) => `${l}\n`).join(''), { mode: 0o600 });
  await fs.promises.rename(tmp, path);
}
