/**
 * Ctrl-C and SIGTERM during a `sync --once` (its own run, or its hand-off to the daemon): the first stops the run
 * through `signal` (a shutdown: uploads in flight keep their Box session for the next run; a hand-off stops waiting),
 * bounded at 4 s; a second leaves at once. The handlers are removed when `body` is over.
 */
import { shutdownReason } from '../core/errors.js';

export async function withRunSignals<T>(body: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ac = new AbortController();
  const onSignal = (sig: NodeJS.Signals): void => {
    if (ac.signal.aborted) {
      // A second Ctrl-C: leave now. The lock becomes stale and the next run takes it over.
      process.stderr.write(`boxsync: ${sig} again: exiting at once; the next run picks up from the journal.\n`);
      process.exit(1);
    }
    process.stderr.write(`boxsync: ${sig}: stopping; transfers in flight are cancelled or checkpointed (press again to exit at once)...\n`);
    // Bounded whatever state the run is in: the journal is crash-safe, so leaving at the bound loses nothing.
    setTimeout(() => {
      process.stderr.write('boxsync: still stopping after 4 s; exiting now. The next run picks up from the journal.\n');
      process.exit(1);
    }, 4_000).unref();
    // A shutdown, not a cancel: uploads in flight keep their Box session for the next run to resume.
    ac.abort(shutdownReason(`interrupted by ${sig}; the next run resumes where this one stopped`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    return await body(ac.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
