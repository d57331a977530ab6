/**
 * InotifyWatcher: the default LocalWatcher on Linux when the native addon loads (inotify-native.ts). One inotify
 * instance per root and a table of watch descriptors: `watches` (folder path -> wd, in TreeWatcher) and `paths`
 * (wd -> folder path). A watched folder costs two Map entries and its path string, about 0.1 KiB, where an
 * `fs.watch` handle per folder (DirWatcher) costs about 3.4 KiB: its JS FSWatcher, Node's wrapper, libuv's entry.
 *
 * Same semantics as DirWatcher, with the kernel's own event kinds instead of libuv's 'rename'/'change':
 * - a created or moved-in folder (IN_ISDIR) is walked and watched, and what is already inside is hinted; no lstat;
 * - a deleted or moved-away folder drops its subtree's wds (IN_DELETE / IN_MOVED_FROM on the parent; IN_IGNORED
 *   for a wd the kernel dropped itself);
 * - the two halves of a rename are hinted as both paths (a delete and a create, which HintBatcher pairs);
 * - IN_Q_OVERFLOW (the kernel queue was full and events were lost): a full rescan hint, and a re-walk that watches
 *   any folder whose create was lost;
 * - the root deleted, moved or unmounted: a full rescan hint (the engine's root guards take it from there) and
 *   degraded health, so the daemon keeps scanning;
 * - ENOSPC/EMFILE or the `maxWatches` budget: degraded health with fallback scans, as DirWatcher.
 */
import type { WatcherOptions } from './watcher-options.js';
import { errnoError } from './fs-errors.js';
import { forEachInotifyEvent, IN, type InotifyAddon, type InotifyHandle } from './inotify-native.js';
import { TreeWatcher } from './watcher-tree.js';

const WATCH_MASK = IN.MODIFY | IN.ATTRIB | IN.MOVED_FROM | IN.MOVED_TO | IN.CREATE | IN.DELETE | IN.DELETE_SELF |
  IN.MOVE_SELF | IN.ONLYDIR | IN.DONT_FOLLOW | IN.EXCL_UNLINK;

export class InotifyWatcher extends TreeWatcher<number> {
  /** wd -> root-relative folder path: the reverse of `watches`. */
  private readonly paths = new Map<number, string>();
  private handle: InotifyHandle | null = null;
  /** An overflow's re-walk is running / another overflow came meanwhile (one walk at a time, one more after it). */
  private rewalking = false;
  private rewalkAgain = false;

  constructor(opts: WatcherOptions, private readonly addon: InotifyAddon) {
    super(opts);
  }

  /** The inotify fd (tests and the bench read its /proc fdinfo), -1 when not open. */
  get fd(): number {
    return this.handle ? this.addon.fd(this.handle) : -1;
  }

  protected override open(): void {
    this.handle = this.addon.open((records, errno) => this.onRecords(records, errno));
  }

  protected override shut(): void {
    if (this.handle) this.addon.close(this.handle);
    this.handle = null;
    this.paths.clear();
  }

  protected placeWatch(rel: string): { readonly watch: number } | 'gone' | { readonly error: unknown } {
    if (!this.handle) return { error: new Error('inotify instance is closed') };
    const wd = this.addon.add(this.handle, this.abs(rel), WATCH_MASK);
    if (wd < 0) {
      const e = errnoError(-wd, `inotify_add_watch ${rel === '' ? 'the root' : rel}`);
      return e.code === 'ENOENT' || e.code === 'ENOTDIR' ? 'gone' : { error: e };
    }
    // The kernel answers the same wd for a folder already watched: under its old path after a move whose events
    // were lost (an overflow). The old path's entry goes; its subtree's entries are re-pointed as the walk meets them.
    const old = this.paths.get(wd);
    if (old !== undefined && old !== rel && this.watches.get(old) === wd) this.watches.delete(old);
    this.paths.set(wd, rel);
    return { watch: wd };
  }

  protected dropWatch(wd: number): void {
    this.paths.delete(wd);
    if (this.handle) this.addon.remove(this.handle, wd); // EINVAL when the kernel dropped it already: fine
  }

  private onRecords(records: Buffer, errno: number): void {
    if (this.closed) return;
    forEachInotifyEvent(records, (wd, mask, _cookie, name) => this.onEvent(wd, mask, name));
    if (errno !== 0) this.degrade(errnoError(errno, 'reading inotify events'));
  }

  private onEvent(wd: number, mask: number, name: string): void {
    const batcher = this.batcher;
    if (this.closed || !batcher) return;
    if (mask & IN.Q_OVERFLOW) {
      batcher.rescan('');
      void this.rewalk();
      return;
    }
    const dir = this.paths.get(wd);
    if (dir === undefined) return; // a wd dropped already (its folder moved away or was deleted)
    if (mask & IN.IGNORED) {
      this.paths.delete(wd);
      if (this.watches.get(dir) === wd) this.watches.delete(dir);
      return;
    }
    if (mask & (IN.DELETE_SELF | IN.MOVE_SELF | IN.UNMOUNT)) {
      // A folder below the root: its parent's IN_DELETE / IN_MOVED_FROM covers it.
      if (dir === '') this.rootGone(mask);
      return;
    }
    if (this.barrierEvent(dir, name)) return;
    const rel = dir === '' ? name : `${dir}/${name}`;
    const isDir = (mask & IN.ISDIR) !== 0;
    if (this.opts.isIgnored(rel, isDir)) return;
    if (mask & (IN.CREATE | IN.MOVED_TO)) {
      batcher.touch(rel);
      if (isDir) {
        // A folder moved over one that was watched under this name: the old one's wds are stale (its IN_IGNORED
        // may come after this event).
        this.unwatchTree(rel);
        void this.addTree(rel, true);
      }
    } else if (mask & (IN.DELETE | IN.MOVED_FROM)) {
      if (isDir) this.unwatchTree(rel);
      batcher.remove(rel);
    } else {
      batcher.touch(rel);
    }
  }

  /** Watch every folder whose create an overflow lost (those watched already cost a lookup and a listing). */
  private async rewalk(): Promise<void> {
    if (this.rewalking) {
      this.rewalkAgain = true;
      return;
    }
    this.rewalking = true;
    try {
      do {
        this.rewalkAgain = false;
        await this.addTree('', false);
      } while (this.rewalkAgain && !this.closed);
    } finally {
      this.rewalking = false;
    }
  }

  private rootGone(mask: number): void {
    const what = mask & IN.UNMOUNT ? 'unmounted' : mask & IN.MOVE_SELF ? 'moved' : 'deleted';
    // A moved root's watches would report its new place's events under the old paths: drop them all.
    this.unwatchTree('');
    this.batcher?.rescan('');
    this.degrade(new Error(`the sync root ${this.opts.rootPath} was ${what}`));
  }
}
