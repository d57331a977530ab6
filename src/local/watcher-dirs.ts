/**
 * DirWatcher: the LocalWatcher used when the native inotify watcher (watcher-inotify.ts) cannot load, and by
 * `daemon.watcher: "dirs"`. One non-recursive `fs.watch` per directory; libuv backs each
 * with a single inotify watch on a shared inotify instance, so a tree of 100,000 files in 5,000 folders costs
 * about 5,000 watches (chokidar 5 costs one per file and one per folder: see README "Daemon").
 *
 * Events name a child of the watched directory; the batcher debounces them into hints. A directory that
 * appears is walked and watched, and everything already inside it is hinted (files may land before the watch
 * does). When the kernel refuses a watch (ENOSPC/EMFILE) or a watch fails, health turns 'degraded' with a
 * reason and the daemon falls back to periodic full scans; the watches already placed keep working.
 */
import { watch, type FSWatcher } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { isGone } from './guard.js';
import { TreeWatcher } from './watcher-tree.js';

/**
 * Rename events whose lstat runs at once. libuv hands a burst's inotify events (up to the kernel queue, 16,384 by
 * default) to JavaScript in one turn of the event loop: starting an lstat for each there and then held the loop
 * for half a second in a 50,000-event churn (`npm run bench -- daemon`, the churn row). So an event only queues its
 * path; the lstats run this many at a time, each answer starting the next, which leaves the loop free between them.
 */
const RENAME_LSTATS_AT_ONCE = 16;

export class DirWatcher extends TreeWatcher<FSWatcher> {
  /** Rename events waiting for their lstat, in the order seen (`renameHead` is the next). */
  private renames: string[] = [];
  private renameHead = 0;
  private renamesRunning = 0;

  protected override inFlight(): number {
    return super.inFlight() + this.renamesRunning + (this.renames.length - this.renameHead);
  }

  override async close(): Promise<void> {
    this.renames = [];
    this.renameHead = 0;
    await super.close();
  }

  protected placeWatch(rel: string): { readonly watch: FSWatcher } | 'gone' | { readonly error: unknown } {
    let w: FSWatcher;
    try {
      w = watch(this.abs(rel), { persistent: true }, (event, filename) => this.onEvent(rel, event, filename));
    } catch (e) {
      return isGone(e) ? 'gone' : { error: e };
    }
    w.on('error', (e) => this.onWatchError(rel, e));
    return { watch: w };
  }

  protected dropWatch(w: FSWatcher): void {
    w.close();
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
    if (this.barrierEvent(dir, name)) return;
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
    if (isDir && !this.watches.has(rel)) await this.addTree(rel, true);
  }
}
