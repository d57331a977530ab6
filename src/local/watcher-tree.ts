/**
 * What the two directory-level watchers share (DirWatcher: one fs.watch per folder; InotifyWatcher: one native
 * inotify instance): the start-up checks, health and its degraded fallback, the walk that watches a new tree (and
 * hints what is already in it), the watch budget and the removal of a moved or deleted subtree's watches.
 * Subclasses place and drop the actual watches and turn their events into HintBatcher calls.
 */
import { lstat, readdir, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LocalWatcher, WatcherHealth, WatchHint } from '../ports/local-watcher.js';
import { HintBatcher } from './watcher-hint-batcher.js';
import { describeWatchFailure, WatchBudgetError } from './watcher-errors.js';
import { DEFAULT_FALLBACK_SCAN_MS, type WatcherOptions } from './watcher-options.js';

export abstract class TreeWatcher<W> implements LocalWatcher {
  /** Root-relative folder path ('' = the root) -> its watch. */
  protected readonly watches = new Map<string, W>();
  protected batcher: HintBatcher | null = null;
  protected closed = false;
  private onHealth: (h: WatcherHealth) => void = () => undefined;
  private state: WatcherHealth = { state: 'starting' };
  private readonly fallbackScanMs: number;
  /** Barrier files made at the root and not reported yet: name -> what their event resolves. */
  private readonly barriers = new Map<string, () => void>();
  /** Walks of new trees running (addTree): the hints they find are not in the batcher yet. */
  private walking = 0;

  constructor(protected readonly opts: WatcherOptions) {
    this.fallbackScanMs = opts.fallbackScanMs ?? DEFAULT_FALLBACK_SCAN_MS;
  }

  async start(onHints: (hints: readonly WatchHint[]) => void, onHealth: (h: WatcherHealth) => void): Promise<void> {
    this.batcher = new HintBatcher(onHints, this.opts);
    this.onHealth = onHealth;
    const root = await lstat(this.opts.rootPath).catch(() => undefined);
    if (!root?.isDirectory()) throw new Error(`the sync root ${this.opts.rootPath} is not a folder (missing or unmounted?); nothing to watch`);
    this.open();
    await this.addTree('', false);
    if (this.state.state === 'starting') this.setHealth({ state: 'ok', watches: this.watches.size });
  }

  health(): WatcherHealth {
    return this.state.state === 'ok' ? { state: 'ok', watches: this.watches.size } : this.state;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.watches.values()) this.dropWatch(w);
    this.watches.clear();
    this.shut();
    this.batcher?.close();
  }

  async barrier(name: string, timeoutMs: number): Promise<void> {
    const batcher = this.batcher;
    if (this.closed || batcher === null) throw new Error('the watcher is not running');
    if (this.state.state !== 'ok') throw new Error(this.state.state === 'degraded' ? this.state.reason : 'the watcher is still starting');
    const deadline = Date.now() + timeoutMs;
    const abs = this.abs(name);
    let timer: NodeJS.Timeout | undefined;
    const seen = new Promise<boolean>((resolve) => {
      this.barriers.set(name, () => resolve(true));
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      await writeFile(abs, '', { flag: 'wx', mode: 0o600 });
      if (!(await seen)) throw new Error(`the watcher did not report a file made at the root within ${timeoutMs} ms`);
      // The events read before the barrier's have reached the batcher; what they started must end too.
      while (this.inFlight() > 0) {
        if (this.closed) throw new Error('the watcher closed');
        if (Date.now() >= deadline) throw new Error(`the watcher was still walking new folders after ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 10));
      }
    } finally {
      clearTimeout(timer);
      this.barriers.delete(name);
      await unlink(abs).catch(() => undefined);
    }
    if (this.closed || this.state.state !== 'ok') throw new Error('the watcher stopped meanwhile');
    batcher.flushAll();
  }

  /**
   * An event for `name` in folder `dir`: true when it is a barrier's file (barrier()), which is then resolved and
   * not hinted. Subclasses ask before their ignore rules (the name is a temp name, which the rules drop).
   */
  protected barrierEvent(dir: string, name: string): boolean {
    if (dir !== '' || this.barriers.size === 0) return false;
    const resolve = this.barriers.get(name);
    if (resolve === undefined) return false;
    resolve();
    return true;
  }

  /** Work that events started and whose hints are not in the batcher yet (a subclass adds its own). */
  protected inFlight(): number {
    return this.walking;
  }

  /** Called once before the first watch is placed (open a native handle, say). */
  protected open(): void {}
  /** Called once on close, after every watch was dropped. */
  protected shut(): void {}
  /** Place the watch on one folder: the watch, 'gone' (it vanished: not an error), or the error that refused it. */
  protected abstract placeWatch(rel: string): { readonly watch: W } | 'gone' | { readonly error: unknown };
  protected abstract dropWatch(w: W): void;

  protected setHealth(h: WatcherHealth): void {
    this.state = h;
    this.onHealth(h);
  }

  protected degrade(e: unknown): void {
    if (this.state.state === 'degraded' || this.closed) return;
    this.setHealth({ state: 'degraded', reason: describeWatchFailure(e, this.fallbackScanMs), fallbackScanMs: this.fallbackScanMs });
  }

  /** Watch `rel` and every directory below it; with `hintContents`, hint every entry found on the way. */
  protected async addTree(rel: string, hintContents: boolean): Promise<void> {
    this.walking += 1;
    try {
      await this.walkTree(rel, hintContents);
    } finally {
      this.walking -= 1;
    }
  }

  private async walkTree(rel: string, hintContents: boolean): Promise<void> {
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

  /** False when the watch was refused (the watcher is degraded then): the walk stops. */
  private watchDir(rel: string): boolean {
    if (this.watches.has(rel) || this.closed) return !this.closed;
    if (this.watches.size >= (this.opts.maxWatches ?? Number.POSITIVE_INFINITY)) {
      this.degrade(new WatchBudgetError(this.opts.maxWatches ?? 0));
      return false;
    }
    const placed = this.placeWatch(rel);
    if (placed === 'gone') return true;
    if ('error' in placed) {
      this.degrade(placed.error);
      return false;
    }
    this.watches.set(rel, placed.watch);
    return true;
  }

  /** Drop the watches of `rel` and of every folder below it. */
  protected unwatchTree(rel: string): void {
    // Below a folder that was never watched nothing is: watchDir places a folder's watch before its children's, and
    // removes them together. So a deleted file costs a lookup, not a walk over every watch.
    if (rel !== '' && !this.watches.has(rel)) return;
    const prefix = `${rel}/`;
    for (const [k, w] of this.watches) {
      if (k === rel || rel === '' || k.startsWith(prefix)) {
        this.dropWatch(w);
        this.watches.delete(k);
      }
    }
  }

  protected abs(rel: string): string {
    return rel === '' ? this.opts.rootPath : join(this.opts.rootPath, rel);
  }
}
