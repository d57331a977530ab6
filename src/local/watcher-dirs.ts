/**
 * DirWatcher: the default LocalWatcher on Linux. One non-recursive `fs.watch` per directory; libuv backs each
 * with a single inotify watch on a shared inotify instance, so a tree of 100,000 files in 5,000 folders costs
 * about 5,000 watches (chokidar 5 costs one per file and one per folder: see README "Daemon").
 *
 * Events name a child of the watched directory; the batcher debounces them into hints. A directory that
 * appears is walked and watched, and everything already inside it is hinted (files may land before the watch
 * does). When the kernel refuses a watch (ENOSPC/EMFILE) or a watch fails, health turns 'degraded' with a
 * reason and the daemon falls back to periodic full scans; the watches already placed keep working.
 */
import { watch, type FSWatcher } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { LocalWatcher, WatcherHealth, WatchHint } from '../ports/local-watcher.js';
import { isGone } from './guard.js';
import { HintBatcher } from './watcher-hint-batcher.js';
import { describeWatchFailure, WatchBudgetError } from './watcher-errors.js';
import { DEFAULT_FALLBACK_SCAN_MS, type WatcherOptions } from './watcher-options.js';

/**
 * Rename events whose lstat runs at once. libuv hands a burst's inotify events (up to the kernel queue, 16,384 by
 * default) to JavaScript in one turn of the event loop: starting an lstat for each there and then held the loop
 * for half a second in a 50,000-event churn (`npm run bench -- daemon`, the churn row). So an event only queues its
 * path; the lstats run this many at a time, each answer starting the next, which leaves the loop free between them.
 */
const RENAME_LSTATS_AT_ONCE = 16;

export class DirWatcher implements LocalWatcher {
  private readonly watchers = new Map<string, FSWatcher>();
  /** Rename events waiting for their lstat, in the order seen (`renameHead` is the next). */
  private renames: string[] = [];
  private renameHead = 0;
  private renamesRunning = 0;
  private batcher: HintBatcher | null = null;
  private onHealth: (h: WatcherHealth) => void = () => undefined;
  private state: WatcherHealth = { state: 'starting' };
  private closed = false;
  private readonly fallbackScanMs: number;

  constructor(private readonly opts: WatcherOptions) {
    this.fallbackScanMs = opts.fallbackScanMs ?? DEFAULT_FALLBACK_SCAN_MS;
  }

  async start(onHints: (hints: readonly WatchHint[]) => void, onHealth: (h: WatcherHealth) => void): Promise<void> {
    this.batcher = new HintBatcher(onHints, this.opts);
    this.onHealth = onHealth;
    const root = await lstat(this.opts.rootPath).catch(() => undefined);
    if (!root?.isDirectory()) throw new Error(`the sync root ${this.opts.rootPath} is not a folder (missing or unmounted?); nothing to watch`);
    await this.addTree('', false);
    if (this.state.state === 'starting') this.setHealth({ state: 'ok', watches: this.watchers.size });
  }

  health(): WatcherHealth {
    return this.state.state === 'ok' ? { state: 'ok', watches: this.watchers.size } : this.state;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.renames = [];
    this.renameHead = 0;
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
    this.batcher?.close();
  }

  private setHealth(h: WatcherHealth): void {
    this.state = h;
    this.onHealth(h);
  }

  private degrade(e: unknown): void {
    if (this.state.state === 'degraded' || this.closed) return;
    this.setHealth({ state: 'degraded', reason: describeWatchFailure(e, this.fallbackScanMs), fallbackScanMs: this.fallbackScanMs });
  }

  /** Watch `rel` and every directory below it; with `hintContents`, hint every entry found on the way. */
  private async addTree(rel: string, hintContents: boolean): Promise<void> {
    const stack = [rel];
    while (stack.length > 0 && !this.closed) {
      const dir = stack.pop()!;
      if (!this.watchDir(dir)) return;
      let entries;
      try {
        entries = await readdir(this.abs(dir), { withFileTypes: true });
      } catch {
        continue; // vanished while walking: its parent's event covers it
      }
      for (const d of entries) {
        const child = dir === '' ? d.name : `${dir}/${d.name}`;
        const isDir = d.isDirectory();
        if (this.opts.isIgnored(child, isDir)) continue;
        if (hintContents) this.batcher?.touch(child);
        if (isDir) stack.push(child);
      }
    }
  }

  private watchDir(rel: string): boolean {
    if (this.watchers.has(rel)) return true;
    if (this.watchers.size >= (this.opts.maxWatches ?? Number.POSITIVE_INFINITY)) {
      this.degrade(new WatchBudgetError(this.opts.maxWatches ?? 0));
      return false;
    }
    let w: FSWatcher;
    try {
      w = watch(this.abs(rel), { persistent: true }, (event, filename) => this.onEvent(rel, event, filename));
    } catch (e) {
      if (isGone(e)) return true;
      this.degrade(e);
      return false;
    }
    w.on('error', (e) => this.onWatchError(rel, e));
    this.watchers.set(rel, w);
    return true;
  }

  private onWatchError(rel: string, e: unknown): void {
    this.unwatchTree(rel);
    if (this.closed) return;
    const code = (e as { code?: string }).code;
    // A watched directory that is deleted or moved away errors out; its parent's event already hinted it.
    if (rel !== '' && (code === 'ENOENT' || code === 'EPERM')) return;
    this.degrade(e);
  }

  private onEvent(dir: string, event: string, filename: string | Buffer | null): void {
    if (this.closed || !this.batcher) return;
    if (filename === null) {
      this.batcher.rescan(dir);
      return;
    }
    const name = filename.toString();
    const rel = dir === '' ? name : `${dir}/${name}`;
    if (this.opts.isIgnored(rel, false)) return;
    if (event === 'change') {
      this.batcher.touch(rel);
      return;
    }
    // A rename is pending from the moment it is seen, not from when its lstat answers: the two halves of a move
    // are two events whose lstats finish in any order (HintBatcher.probe).
    this.batcher.probe(rel);
    this.renames.push(rel);
    this.pumpRenames();
  }

  private pumpRenames(): void {
    while (!this.closed && this.renamesRunning < RENAME_LSTATS_AT_ONCE && this.renameHead < this.renames.length) {
      const rel = this.renames[this.renameHead++]!;
      this.renamesRunning++;
      void this.onRename(rel).finally(() => {
        this.renamesRunning--;
        this.pumpRenames();
      });
    }
    if (this.renameHead === this.renames.length) {
      this.renames = [];
      this.renameHead = 0;
    } else if (this.renameHead > 4096 && this.renameHead * 2 > this.renames.length) {
      this.renames = this.renames.slice(this.renameHead);
      this.renameHead = 0;
    }
  }

  private async onRename(rel: string): Promise<void> {
    let isDir: boolean;
    try {
      isDir = (await lstat(this.abs(rel))).isDirectory();
    } catch {
      this.unwatchTree(rel);
      this.batcher?.remove(rel);
      return;
    }
    if (this.closed) return;
    if (isDir && this.opts.isIgnored(rel, true)) {
      this.batcher?.drop(rel);
      return;
    }
    this.batcher?.touch(rel);
    if (isDir && !this.watchers.has(rel)) await this.addTree(rel, true);
  }

  private unwatchTree(rel: string): void {
    // Below a folder that was never watched nothing is: watchDir places a folder's watch before its children's, and
    // removes them together. So a deleted file costs a lookup, not a walk over every watch.
    if (rel !== '' && !this.watchers.has(rel)) return;
    const prefix = `${rel}/`;
    for (const [k, w] of this.watchers) {
      if (k === rel || (rel === '' ? true : k.startsWith(prefix))) {
        w.close();
        this.watchers.delete(k);
      }
    }
  }

  private abs(rel: string): string {
    return rel === '' ? this.opts.rootPath : join(this.opts.rootPath, rel);
  }
}
