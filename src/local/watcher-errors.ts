/**
 * A watcher failure and the sentence status and the log show for it: the kernel's inotify limit (ENOSPC:
 * max_user_watches reached; EMFILE: max_user_instances or open files), the configured budget, or anything else.
 */

/** The configured `maxWatches` budget is used up: treated like the kernel limit. */
export class WatchBudgetError extends Error {
  readonly code = 'EBUDGET';
  constructor(readonly maxWatches: number) {
    super(`watch budget of ${maxWatches} inotify watches (config maxWatches) is used up`);
  }
}

export function describeWatchFailure(e: unknown, fallbackScanMs: number): string {
  const code = (e as { code?: unknown } | null)?.code;
  const every = `falling back to a full scan every ${Math.round(fallbackScanMs / 1000)} s`;
  if (code === 'ENOSPC') {
    return `inotify watch limit reached (fs.inotify.max_user_watches); ${every}. Raise it with ` +
      '`sysctl fs.inotify.max_user_watches=524288` to get live local changes back';
  }
  if (code === 'EBUDGET') return `${(e as Error).message}; ${every}`;
  if (code === 'EMFILE') {
    return `too many inotify instances or open files (fs.inotify.max_user_instances / ulimit -n); ${every}`;
  }
  return `file watcher failed (${e instanceof Error ? e.message : String(e)}); ${every}`;
}
