/**
 * ChokidarWatcher: the portable LocalWatcher, chokidar 5 behind the port. On Linux chokidar places one
 * inotify watch per file and per folder, so a 100,000-file tree needs over 100,000 watches (see README
 * "Daemon" for the measurement); the daemon therefore defaults to DirWatcher and keeps this one selectable
 * (`watcher: chokidar`) for file systems where per-directory events are not enough.
 *
 * Raw chokidar events go through the shared HintBatcher, so debouncing, delete holding and batching are the
 * same as DirWatcher's. chokidar's own awaitWriteFinish is off: it polls every file with stat.
 */
import { watch, type FSWatcher } from 'chokidar';
import { relative, sep } from 'node:path';
import type { LocalWatcher, WatcherHealth, WatchHint } from '../ports/local-watcher.js';
import { HintBatcher } from './watcher-hint-batcher.js';
import { describeWatchFailure } from './watcher-errors.js';
import { DEFAULT_FALLBACK_SCAN_MS, type WatcherOptions } from './watcher-options.js';

export class ChokidarWatcher implements LocalWatcher {
  private watcher: FSWatcher | null = null;
  private batcher: HintBatcher | null = null;
  private state: WatcherHealth = { state: 'starting' };
  private onHealth: (h: WatcherHealth) => void = () => undefined;
  private watched = 0;
  private readonly fallbackScanMs: number;

  constructor(private readonly opts: WatcherOptions) {
    this.fallbackScanMs = opts.fallbackScanMs ?? DEFAULT_FALLBACK_SCAN_MS;
  }

  async start(onHints: (hints: readonly WatchHint[]) => void, onHealth: (h: WatcherHealth) => void): Promise<void> {
    const batcher = new HintBatcher(onHints, this.opts);
    this.batcher = batcher;
    this.onHealth = onHealth;
    const w = watch(this.opts.rootPath, {
      persistent: true,
      ignoreInitial: true,
      followSymlinks: false,
      awaitWriteFinish: false,
      atomic: false,
      ignored: (p, stats) => {
        const rel = this.rel(p);
        return rel !== '' && this.opts.isIgnored(rel, stats?.isDirectory() ?? false);
      },
    });
    this.watcher = w;
    w.on('all', (event, p) => {
      const rel = this.rel(p);
      if (rel === '') return;
      if (event === 'unlink' || event === 'unlinkDir') batcher.remove(rel);
      else batcher.touch(rel);
    });
    w.on('error', (e) => this.degrade(e));
    await new Promise<void>((resolve) => w.once('ready', () => resolve()));
    this.watched = Object.values(w.getWatched()).reduce((n, names) => n + names.length, 0);
    if (this.state.state === 'starting') this.setHealth({ state: 'ok', watches: this.watched });
  }

  health(): WatcherHealth {
    return this.state;
  }

  async close(): Promise<void> {
    this.batcher?.close();
    await this.watcher?.close();
  }

  private setHealth(h: WatcherHealth): void {
    this.state = h;
    this.onHealth(h);
  }

  private degrade(e: unknown): void {
    if (this.state.state === 'degraded') return;
    this.setHealth({ state: 'degraded', reason: describeWatchFailure(e, this.fallbackScanMs), fallbackScanMs: this.fallbackScanMs });
  }

  private rel(p: string): string {
    const r = relative(this.opts.rootPath, p);
    return sep === '/' ? r : r.split(sep).join('/');
  }
}
