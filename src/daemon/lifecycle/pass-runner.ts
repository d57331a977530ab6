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

export class PassRunner {
  private wanted: 'none' | 'hint' | 'full' = 'none';
  private running: Promise<void> | null = null;
  private readonly abort = new AbortController();
  private backoffMs = 0;
  private failures = 0;
  private stopped = false;
  private passes = 0;
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
    this.abort.abort(shutdownReason('the daemon is stopping; interrupted transfers resume on the next start'));
    await this.running?.catch(() => undefined);
  }

  private async loop(): Promise<void> {
    await this.sleep(this.opts.gatherMs ?? 50);
    while (this.wanted !== 'none' && !this.stopped) {
      const fullRescan = this.wanted === 'full';
      this.wanted = 'none';
      try {
        this.passes++;
        const summary = await this.engine.runOnce({ signal: this.abort.signal, fullRescan });
        this.opts.onSummary?.(summary);
        if (summary.outcome === 'fatal') {
          this.stopped = true;
          this.opts.onFatal?.(summary.message);
          return;
        }
        this.backoffMs = 0;
        this.failures = 0;
        this.lastError = null;
        this.nextRetryAtMs = null;
      } catch (e) {
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
