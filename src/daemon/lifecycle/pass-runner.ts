/**
 * PassRunner: turns a stream of "something changed" requests into engine passes, one at a time.
 *
 * Requests that arrive while a pass runs are coalesced into the next pass, so a burst of 10,000 hints becomes
 * a few passes, not 10,000. A short gather window after the first request lets hints that arrive together
 * (both halves of a move, a watcher batch and its long-poll echo) share one pass. A pass that throws backs off
 * (1 s doubling to 5 min) and resets on success; a fatal outcome stops the runner and is reported.
 */
import { shutdownReason } from '../../core/errors.js';
import { nominalDelayMs, passRunnerBackoff, withBounds } from '../../core/retry.js';
import type { Logger } from '../../logger.js';
import type { Engine, RunSummary } from '../../engine/types.js';

export interface PassRunnerOptions {
  readonly gatherMs?: number;
  readonly minBackoffMs?: number;
  readonly maxBackoffMs?: number;
  readonly onSummary?: (s: RunSummary) => void;
  readonly onFatal?: (message: string) => void;
  /** A pass is about to be gathered and run (the runner was idle). */
  readonly onBusy?: () => void;
  /** The runner has run every pass asked for and waits for the next request. */
  readonly onIdle?: () => void;
}

/** What `next()` waits for: the summary of the first pass that started after it was asked, and that pass's number. */
export interface PassOutcome {
  readonly summary: RunSummary;
  readonly pass: number;
}

interface Waiter {
  readonly resolve: (o: PassOutcome) => void;
  readonly reject: (e: unknown) => void;
}

export class PassRunner {
  private wanted: 'none' | 'hint' | 'full' = 'none';
  private running: Promise<void> | null = null;
  private readonly abort = new AbortController();
  private backoffMs = 0;
  private failures = 0;
  private stopped = false;
  private passes = 0;
  /** `next()` callers for the pass that starts next, and for the one running. */
  private waiting: Waiter[] = [];
  private inPass: Waiter[] = [];
  /** The next pass starts without the gather window (next()). */
  private noGather = false;
  lastError: string | null = null;
  nextRetryAtMs: number | null = null;

  constructor(
    private readonly engine: Engine,
    private readonly log: Logger,
    private readonly opts: PassRunnerOptions = {},
  ) {}

  get passCount(): number {
    return this.passes;
  }

  get busy(): boolean {
    return this.running !== null;
  }

  /** Ask for a pass; 'full' asks for a full rescan and listing. */
  request(kind: 'hint' | 'full'): void {
    if (this.stopped) return;
    if (kind === 'full' || this.wanted === 'none') this.wanted = kind;
    if (!this.running) this.start();
  }

  /**
   * Ask for a pass and wait for its outcome: the first pass that starts after this call (one running now does not
   * count: it may have looked before the change the caller knows of). A pass that throws rejects with its error
   * (the runner retries it on its own); stopping rejects with the shutdown reason.
   */
  next(kind: 'hint' | 'full'): Promise<PassOutcome> {
    if (this.stopped) return Promise.reject(this.abort.signal.aborted ? this.abort.signal.reason : new Error('syncing has stopped (`boxsync status` says why)'));
    const p = new Promise<PassOutcome>((resolve, reject) => this.waiting.push({ resolve, reject }));
    // What it waits for was gathered already (the watchers' barrier): no gather window before this pass.
    this.noGather = true;
    this.request(kind);
    return p;
  }

  private start(): void {
    this.opts.onBusy?.();
    this.running = this.loop().finally(() => {
      this.running = null;
      if (this.stopped) return;
      // A request that came between the loop's last check and this point still gets its pass.
      if (this.wanted !== 'none') this.start();
      else this.opts.onIdle?.();
    });
  }

  /** Resolves when no pass is running or wanted. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /**
   * Stop starting passes and abort the one running with the shutdown reason, so its transfers checkpoint
   * (upload sessions keep their confirmed parts) rather than being cancelled.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    const reason = shutdownReason('the daemon is stopping; interrupted transfers resume on the next start');
    this.abort.abort(reason);
    for (const w of this.waiting.splice(0)) w.reject(reason);
    await this.running?.catch(() => undefined);
    for (const w of this.inPass.splice(0)) w.reject(reason);
  }

  private async loop(): Promise<void> {
    if (!this.noGather) await this.sleep(this.opts.gatherMs ?? 50);
    while (this.wanted !== 'none' && !this.stopped) {
      const fullRescan = this.wanted === 'full';
      this.wanted = 'none';
      this.inPass = this.waiting;
      this.waiting = [];
      this.noGather = false;
      try {
        this.passes++;
        const summary = await this.engine.runOnce({ signal: this.abort.signal, fullRescan });
        this.opts.onSummary?.(summary);
        const pass = this.passes;
        for (const w of this.inPass.splice(0)) w.resolve({ summary, pass });
        if (summary.outcome === 'fatal') {
          this.stopped = true;
          for (const w of this.waiting.splice(0)) w.reject(new Error(`syncing stopped: ${summary.message}`));
          this.opts.onFatal?.(summary.message);
          return;
        }
        this.backoffMs = 0;
        this.failures = 0;
        this.lastError = null;
        this.nextRetryAtMs = null;
      } catch (e) {
        for (const w of this.inPass.splice(0)) w.reject(e);
        if (this.stopped) return;
        this.failures += 1;
        this.backoffMs = nominalDelayMs(withBounds(passRunnerBackoff, { minMs: this.opts.minBackoffMs, maxMs: this.opts.maxBackoffMs }), this.failures);
        this.lastError = e instanceof Error ? e.message : String(e);
        this.nextRetryAtMs = Date.now() + this.backoffMs;
        this.log.error({ err: e, retryInMs: this.backoffMs }, `sync pass failed: ${this.lastError}; will retry in ${Math.round(this.backoffMs / 1000)} s`);
        if (this.wanted === 'none') this.wanted = fullRescan ? 'full' : 'hint';
        await this.sleep(this.backoffMs);
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.abort.signal.aborted) return resolve();
      const t = setTimeout(resolve, ms);
      this.abort.signal.addEventListener('abort', () => {
        clearTimeout(t);
        resolve();
      }, { once: true });
    });
  }
}
