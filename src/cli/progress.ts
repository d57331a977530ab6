/**
 * What `sync --once` shows while it runs and when it ends.
 *
 * - On a TTY: one cli-progress bar on stderr with files and bytes done and left, the transfer rate and the ETA,
 *   redrawn from the engine's status reports.
 * - Otherwise: one plain log line per completed operation on stderr (`upload  Docs/a.txt  (new local file)`),
 *   which is what cron mail and journald want.
 * - Always: one summary line on stdout when the run ends, so scripts can capture exactly that line.
 *
 * Figures come from the engine's StatusReport: `queued` and `inFlight` say what is left; what is done is counted
 * here from completed operations and finished transfers, because the engine reports only the present.
 */
import { SingleBar } from 'cli-progress';
import type { OperationKind } from '../core/operations.js';
import { formatBytes, formatDuration } from '../core/format.js';
import { assertNever } from '../core/operations.js';
import { escapeText, safeText } from '../core/escape.js';
import type { EngineEvents, RunSummary, StatusReport } from '../engine/types.js';

export type OperationEvent = Parameters<NonNullable<EngineEvents['onOperation']>>[0];

export interface RunReporter {
  readonly onStatus: (s: StatusReport) => void;
  readonly onOperation: (o: OperationEvent) => void;
  /** A line the engine tells once (a change of scope), kept visible above the bar. */
  readonly onNotice: (n: { text: string }) => void;
  /** Stop the bar and print the summary line. */
  finish(summary: RunSummary): void;
  /** Stop the bar without a summary (the run died; the caller prints why). */
  abort(): void;
  /** Write a log line (on a TTY above the bar, never into its line). */
  log(text: string): void;
}

export interface ReporterOptions {
  /** Draw a progress bar (stderr is a TTY) instead of log lines. */
  readonly tty: boolean;
  readonly out: NodeJS.WritableStream;
  readonly err: NodeJS.WritableStream;
  readonly nowMs?: () => number;
}

export interface ProgressFigures {
  readonly filesDone: number;
  readonly filesTotal: number;
  readonly bytesDone: number;
  readonly bytesTotal: number;
  /** Done by bytes when there are bytes to move, else by operations; 0-100. */
  readonly percent: number;
  readonly rateBytesPerSec: number;
  /** Null until there is a transfer rate to estimate from. */
  readonly etaSec: number | null;
  /** The transfers in flight now, oldest first. */
  readonly current: readonly string[];
}

/**
 * Tracks done/left across status reports. The engine's `queued` counts every operation not finished yet, the
 * running ones included, and the bytes still to move (in-flight remainders included): each piece of work is
 * counted once. A transfer that leaves `inFlight` counts its total as done.
 */
export class ProgressTracker {
  #filesDone = 0;
  #finishedBytes = 0;
  #inFlight = new Map<string, { path: string; done: number; total: number; startedAtMs: number }>();
  #queuedOps = 0;
  #bytesLeft = 0;
  #rate = 0;
  #eta: number | null = null;
  #over = false;

  operationDone(): void {
    this.#filesDone++;
  }

  status(s: StatusReport): void {
    const now = new Map<string, { path: string; done: number; total: number; startedAtMs: number }>();
    let queuedOps = 0;
    let bytesLeft = 0;
    let rate = 0;
    let eta: number | null = null;
    for (const r of s.roots) {
      queuedOps += r.queued.ops;
      bytesLeft += r.queued.bytes;
      rate += r.rateBytesPerSec;
      if (r.etaSec !== null) eta = Math.max(eta ?? 0, r.etaSec);
      for (const t of r.inFlight) now.set(`${t.root}\0${t.direction}\0${t.path}`, { path: t.path, done: t.doneBytes, total: t.totalBytes, startedAtMs: t.startedAtMs });
    }
    for (const [key, t] of this.#inFlight) if (!now.has(key)) this.#finishedBytes += t.total;
    this.#inFlight = now;
    this.#queuedOps = queuedOps;
    this.#bytesLeft = bytesLeft;
    this.#rate = rate;
    this.#eta = eta;
  }

  /** The run is over: its exact byte count replaces what the sampled reports saw (small files finish between them). */
  finished(transferredBytes: number): void {
    this.#finishedBytes = Math.max(this.#finishedBytes, transferredBytes);
    this.#inFlight.clear();
    this.#queuedOps = 0;
    this.#bytesLeft = 0;
    this.#over = true;
  }

  figures(): ProgressFigures {
    let inFlightDone = 0;
    for (const t of this.#inFlight.values()) inFlightDone += t.done;
    const bytesDone = this.#finishedBytes + inFlightDone;
    const bytesTotal = bytesDone + this.#bytesLeft;
    const filesTotal = this.#filesDone + Math.max(this.#queuedOps, this.#inFlight.size);
    const percent = this.#over
      ? 100
      : bytesTotal > 0
        ? Math.floor((100 * bytesDone) / bytesTotal)
        : filesTotal > 0
          ? Math.floor((100 * this.#filesDone) / filesTotal)
          : 0;
    const rate = this.#rate;
    const eta = this.#over ? 0 : rate > 0 ? (this.#eta ?? Math.ceil(this.#bytesLeft / rate)) : null;
    const current = [...this.#inFlight.values()].sort((a, b) => a.startedAtMs - b.startedAtMs).map((t) => t.path);
    return { filesDone: this.#filesDone, filesTotal, bytesDone, bytesTotal, percent, rateBytesPerSec: rate, etaSec: eta, current };
  }
}

/** At most `max` characters of the files in flight: the first name, shortened from the left, and how many more. */
export function currentText(current: readonly string[], max = 40): string {
  if (current.length === 0) return '';
  const first = escapeText(current[0]!);
  const more = current.length > 1 ? ` +${current.length - 1}` : '';
  const room = Math.max(8, max - more.length);
  return `${first.length > room ? `…${first.slice(first.length - room + 1)}` : first}${more}`;
}

export function createRunReporter(opts: ReporterOptions): RunReporter {
  const tracker = new ProgressTracker();
  let bar: SingleBar | null = null;
  const render = (): void => {
    const f = tracker.figures();
    const payload = {
      files: `${f.filesDone}/${f.filesTotal}`,
      bytes: `${formatBytes(f.bytesDone)}/${formatBytes(f.bytesTotal)}`,
      rate: `${formatBytes(f.rateBytesPerSec)}/s`,
      etaText: f.etaSec === null ? '--' : formatDuration(f.etaSec * 1000),
      current: currentText(f.current),
    };
    if (bar === null) {
      bar = new SingleBar({
        stream: opts.err,
        format: '{bar} {value}% | {files} ops | {bytes} | {rate} | ETA {etaText} | {current}',
        hideCursor: true,
        // Stopping clears the line: a message printed above the bar never shares a line with it.
        clearOnComplete: true,
        fps: 5,
      });
      bar.start(100, f.percent, payload);
    }
    bar.update(f.percent, payload);
  };
  const stopBar = (): void => {
    if (bar !== null) {
      bar.stop();
      bar = null;
    }
  };
  /** A message (a failure, a log line) goes above the bar, on lines of its own; the bar is redrawn after it. */
  const printAbove = (text: string): void => {
    const hadBar = bar !== null;
    stopBar();
    opts.err.write(text.endsWith('\n') ? text : `${text}\n`);
    if (hadBar) render();
  };
  return {
    onStatus: (s) => {
      tracker.status(s);
      if (opts.tty) render();
    },
    onOperation: (o) => {
      tracker.operationDone();
      if (opts.tty) {
        // Failures must stay visible after the bar moves on.
        if (!o.ok) printAbove(formatOperationLine(o));
        render();
      } else {
        opts.err.write(`${formatOperationLine(o)}\n`);
      }
    },
    onNotice: (n) => (opts.tty ? printAbove(`note: ${n.text}`) : void opts.err.write(`note: ${n.text}\n`)),
    finish: (summary) => {
      tracker.finished(summary.uploadedBytes + summary.downloadedBytes);
      if (bar !== null) render(); // the last frame (100 %) is drawn before the line is cleared
      stopBar();
      opts.out.write(`${formatSummary(summary)}\n`);
      for (const line of formatParked(summary)) opts.err.write(`${line}\n`);
    },
    abort: stopBar,
    log: (text) => (opts.tty ? printAbove(text) : void opts.err.write(text)),
  };
}

/** One line per operation; the path (a name from Box or from disk), the reason and the error are escaped. */
export function formatOperationLine(o: OperationEvent): string {
  const status = o.ok ? '' : 'FAILED ';
  const reason = escapeText(o.reason);
  const tail = o.ok ? `(${reason})` : `(${reason}): ${o.error === undefined || o.error === null ? 'unknown error' : safeText(o.error)}`;
  return `${status}${o.kind.padEnd(20)} ${escapeText(o.path)}  ${tail}`;
}

/** The one-line summary: outcome, duration, what moved, conflicts and failures. Never contains a token. */
export function formatSummary(s: RunSummary): string {
  const parts: string[] = [];
  const n = (k: OperationKind): number => s.ops[k] ?? 0;
  const down = n('download') + n('write-weblink');
  const up = n('upload') + n('upload-version');
  parts.push(`${down} downloaded (${formatBytes(s.downloadedBytes)})`);
  parts.push(`${up} uploaded (${formatBytes(s.uploadedBytes)})`);
  for (const [kind, count] of Object.entries(s.ops) as [OperationKind, number][]) {
    const label = otherLabel(kind);
    if (label !== null && count > 0) parts.push(`${count} ${label}`);
  }
  parts.push(`${s.conflicts} conflict${s.conflicts === 1 ? '' : 's'}`);
  parts.push(`${s.failedItems} failed`);
  if (s.parkedItems > 0) parts.push(`${s.parkedItems} parked`);
  const passes = `${s.passes} pass${s.passes === 1 ? '' : 'es'}`;
  // "in 77 ms" after "will be retried" read as a retry time: only a converged run says "in".
  const head =
    s.outcome === 'converged'
      ? `boxsync: converged in ${formatDuration(s.durationMs)} (${passes})`
      : `boxsync: ${s.outcome === 'failed-items' && s.failedItems + s.parkedItems === 0 ? UNFINISHED : outcomeText(s.outcome)} (the run took ${formatDuration(s.durationMs)}, ${passes})`;
  const why = whyOf(s.message);
  const tail = why === null ? '' : ` - ${safeText(why, 4000)}`;
  return `${head}: ${parts.join(', ')}${tail}`;
}

/**
 * The items that failed or are parked, one line each, on every run while any exist: a parked item does not sync
 * until it changes, so it is shown again every time, never only once.
 */
export function formatParked(s: RunSummary): string[] {
  if (s.problems.length === 0) return [];
  const lines: string[] = [];
  if (s.failedItems > 0) lines.push(`boxsync: ${s.failedItems} item${s.failedItems === 1 ? '' : 's'} failed and will be retried:`);
  for (const p of s.problems) if (!p.parked) lines.push(`  FAILED ${p.path}: ${p.message}`);
  if (s.parkedItems > 0) lines.push(`boxsync: ${s.parkedItems} item${s.parkedItems === 1 ? ' is' : 's are'} parked and not syncing until they change:`);
  for (const p of s.problems) if (p.parked) lines.push(`  PARKED ${p.path}: ${p.message}`);
  const total = s.failedItems + s.parkedItems;
  if (total > s.problems.length) lines.push(`  … and ${total - s.problems.length} more (boxsync status lists them all)`);
  return lines;
}

/**
 * The engine's message repeats the counts and ends with `; N passes, T s (reason)` when there is a reason; the
 * counts are shown here already, so only the reason is kept.
 */
function whyOf(message: string): string | null {
  const m = /; \d+ pass(?:es)?, [\d.]+ s \((.*)\)\s*$/s.exec(message.trim());
  const why = m?.[1]?.trim().replace(/\s*\n\s*/g, ' ');
  return why ? why : null;
}

/**
 * A run that ended early with no item failing (Box unreachable, a network outage, Ctrl-C): not "items failed",
 * which read as a lie next to "0 failed"; the reason follows the counts.
 */
const UNFINISHED = 'not in sync: the run could not finish; nothing is lost, the next run picks up from here';

function outcomeText(o: RunSummary['outcome']): string {
  switch (o) {
    case 'converged':
      return 'converged';
    case 'failed-items':
      return 'not in sync: some items failed or are parked (listed below)';
    case 'fatal':
      return 'stopped by a fatal error';
    case 'guard':
      return 'stopped by a safety guard';
    default:
      return assertNever(o);
  }
}

/** Labels for the summary; null for kinds already counted as downloads/uploads. */
function otherLabel(kind: OperationKind): string | null {
  switch (kind) {
    case 'download':
    case 'write-weblink':
    case 'upload':
    case 'upload-version':
      return null;
    case 'create-remote-folder':
      return 'folders created on Box';
    case 'create-local-folder':
      return 'folders created locally';
    case 'remote-move':
      return 'moved on Box';
    case 'local-move':
      return 'moved locally';
    case 'remote-trash':
      return 'trashed on Box';
    case 'local-trash':
      return 'moved to the local trash';
    case 'remote-restore':
      return 'restored from the Box trash';
    case 'conflict-copy':
      return 'conflict copies';
    case 'link':
      return 'linked without transfer';
    case 'forget':
      return 'forgotten';
    case 'report':
      return 'skipped (reported)';
    default:
      return assertNever(kind);
  }
}
