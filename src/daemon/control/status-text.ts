/**
 * The readable form of DaemonStatus and PathStatus that `boxsync status` prints. Every path (names from Box and
 * from disk) and every message is escaped here, where it is printed (core/escape.ts).
 */
import { formatLock } from './item-text.js';
import { escapeText as esc, safeText } from '../../core/escape.js';
import { shownFailurePath } from '../../engine/remote-listing.js';
import { formatBytesOneDecimal, formatWholeDuration } from '../../core/format.js';
import type { DaemonStatus, PathStatus } from './control-protocol.js';
import type { LastExit } from './last-exit.js';
import { escapeText } from '../../core/escape.js';
import { reasonText } from '../../engine/scope-change.js';

/**
 * What in a running daemon's status needs the user (`boxsync status` exits 1 when this is not empty): a fatal
 * error, a stopped remote event stream (for any reason: a daemon that hears nothing from Box is never "ok"), a
 * held safety guard, items failing or parked, a degraded watcher.
 */
export function attentionReasons(s: DaemonStatus): string[] {
  const out: string[] = [];
  const e = s.engine;
  const fatalNotice = s.notices.find((n) => n.startsWith('syncing stopped:'));
  if (e.fatal) out.push(`syncing stopped: ${e.fatal.message}`);
  else if (fatalNotice !== undefined) out.push(fatalNotice);
  const rs = s.remoteStream;
  if (rs.state === 'stopped') {
    const why = s.stopping ? 'the daemon is stopping' : e.fatal || fatalNotice !== undefined ? 'by the fatal error' : rs.note ?? 'no reason recorded';
    out.push(`remote events stopped (${why}): changes made on Box are not seen`);
  }
  if (e.heldGuard) out.push(`a safety guard holds syncing (${e.heldGuard.id})`);
  const parked = e.errors.filter((p) => p.nextRetryAtMs === null).length;
  const failing = e.errors.length - parked;
  if (failing > 0) out.push(`${failing} item${failing === 1 ? '' : 's'} failing (retried with backoff)`);
  if (parked > 0) out.push(`${parked} item${parked === 1 ? '' : 's'} parked until changed`);
  for (const w of s.watchers) if (w.health.state === 'degraded') out.push(`watcher degraded for ${w.localPath}`);
  return out;
}

/** A rate as `--bwlimit` takes it (500K, 2M, off), in bytes per second for people. */
export function rateText(bytesPerSec: number | null): string {
  if (bytesPerSec === null) return 'off';
  if (bytesPerSec >= 1024 * 1024) return `${Number((bytesPerSec / (1024 * 1024)).toFixed(2))} MiB/s`;
  return `${Number((bytesPerSec / 1024).toFixed(2))} KiB/s`;
}

/** Every folder pair paused on its own (`boxsync pause PATH`): the daemon as a whole is paused. */
export function allPairsPaused(s: DaemonStatus): boolean {
  const paused = s.controls?.pausedPairs ?? [];
  return paused.length > 0 && s.engine.roots.every((r) => paused.includes(r.localPath));
}

export function formatDaemonStatus(s: DaemonStatus, nowMs: number = Date.now()): string {
  const e = s.engine;
  const lines: string[] = [];
  const shownPhase = e.phase === 'idle' && allPairsPaused(s) ? 'paused' : e.phase;
  const phase = s.stopping ? `${shownPhase} (stopping)` : shownPhase;
  lines.push(`boxsync daemon (pid ${s.pid}, up ${formatWholeDuration(nowMs - s.startedAtMs)}): ${phase}`);
  lines.push(`  last successful sync: ${e.lastSuccessfulSyncAtMs === null ? 'not yet' : `${ago(nowMs, e.lastSuccessfulSyncAtMs)}`}`);
  const attention = attentionReasons(s);
  lines.push(attention.length === 0 ? '  health: ok' : `  health: NEEDS ATTENTION: ${attention.map((a) => safeText(a)).join('; ')}`);
  for (const n of s.notices) lines.push(`  ! ${safeText(n)}`);
  if (e.fatal) lines.push(`  FATAL ${e.fatal.code}: ${safeText(e.fatal.message)}`);
  if (e.heldGuard) {
    lines.push(`  guard held (${esc(e.heldGuard.id)}): ${safeText(e.heldGuard.message)}`);
    const first = e.heldGuard.firstPaths ?? [];
    if (first.length > 0) {
      const more = (e.heldGuard.deletes ?? first.length) - first.length;
      lines.push(`    would delete: ${first.map((p) => esc(p)).join(', ')}${more > 0 ? ` and ${more} more` : ''}`);
    }
    lines.push(`    confirm with: boxsync confirm ${esc(e.heldGuard.id)}`);
  }
  for (const r of e.roots) {
    lines.push(`  ${esc(r.localPath)} <-> Box folder ${esc(r.remoteId)}`);
    lines.push(`    in sync: ${r.inSync.files} files, ${r.inSync.folders} folders, ${formatBytesOneDecimal(r.inSync.bytes)}`);
    lines.push(`    queued: ${r.queued.ops} operations, ${formatBytesOneDecimal(r.queued.bytes)}`);
    if (r.inFlight.length > 0) {
      const eta = r.etaSec === null ? '' : `, ETA ${formatWholeDuration(r.etaSec * 1000)}`;
      lines.push(`    transferring at ${formatBytesOneDecimal(r.rateBytesPerSec)}/s${eta}:`);
      for (const t of r.inFlight) {
        const pct = t.totalBytes > 0 ? Math.floor((100 * t.doneBytes) / t.totalBytes) : 100;
        lines.push(`      ${t.direction === 'up' ? '↑' : '↓'} ${esc(t.path)}  ${pct}% of ${formatBytesOneDecimal(t.totalBytes)}`);
      }
    }
    const w = s.watchers.find((x) => x.root === r.root);
    if (w) lines.push(`    watcher (${w.kind}): ${watcherText(w.health)}`);
  }
  const rs = s.remoteStream;
  const effective = rs.effective === rs.configured ? rs.effective : `${rs.effective} (configured: ${rs.configured})`;
  lines.push(`  remote events: ${rs.state} on the ${effective} stream${rs.note ? `; ${safeText(rs.note)}` : ''}`);
  const el = s.eventLoop;
  const c = s.controls;
  if (c !== undefined) {
    const notes = c.notifications.on ? (c.notifications.available ? 'on' : 'on (none shown: no desktop session or notify-send)') : 'off';
    lines.push(`  bandwidth limit: ${rateText(c.bandwidthBytesPerSec)}; notifications: ${notes}`);
    for (const p of c.pausedPairs) lines.push(`  paused: ${esc(p)} (\`boxsync resume ${esc(p)}\` continues it)`);
  }
  if (el !== undefined) lines.push(`  event loop: blocked at most ${el.recentMaxDelayMs} ms in the last minute, ${el.maxDelayMs} ms since the start (p99 ${el.p99DelayMs} ms)`);
  const ic = s.idleCheck;
  if (ic?.running === true) lines.push(`  idle check: reading the journal for paths out of sync (${ic.slices} slices so far${ic.pauses > 0 ? `, paused ${ic.pauses} time(s) for a pass` : ''})`);
  if (e.conflicts.length > 0) {
    lines.push(`  conflicts (${e.conflicts.length}):`);
    for (const c of e.conflicts.slice(0, 20)) lines.push(`    ${esc(c.path)}: your copy kept as ${esc(c.copy)}`);
  }
  const unsynced = e.unsynced ?? [];
  if (unsynced.length > 0) {
    lines.push(`  not synced any more (${unsynced.length}; each local copy stays where it is, unsynced, and Box keeps its own):`);
    for (const u of unsynced.slice(0, 20)) lines.push(`    ${escapeText(u.path)}${u.kind === 'folder' ? '/' : ''}: ${u.reason === 'not-selected' ? 'not selected (selective sync; the local copy was freed if it held nothing Box lacked)' : `excluded by ${reasonText(u.reason)}`} since ${new Date(u.sinceMs).toISOString()}`);
    if (unsynced.length > 20) lines.push(`    … and ${unsynced.length - 20} more (boxsync status --json lists all)`);
  }
  for (const sel of e.selecting ?? []) lines.push(`  ${escapeText(sel.path)}/: downloading for selective sync`);
  if (e.errors.length > 0) {
    lines.push(`  errors (${e.errors.length}):`);
    for (const p of e.errors.slice(0, 20)) {
      const next = p.nextRetryAtMs === null ? 'waits for the file to change' : `retry ${p.nextRetryAtMs <= nowMs ? 'now' : `in ${formatWholeDuration(p.nextRetryAtMs - nowMs)}`}`;
      const since = p.sinceMs === null || p.sinceMs === undefined ? '' : `; since ${sinceText(p.sinceMs, nowMs)}`;
      lines.push(`    ${shownFailurePath(p.code, p.path)}: ${safeText(p.message)} (${esc(p.code)}; ${next}${since})`);
    }
    if (e.errors.length > 20) lines.push(`    … and ${e.errors.length - 20} more (boxsync status --json lists all)`);
  }
  return `${lines.join('\n')}\n`;
}

/** Since when an item fails, in local time: "14:02" today, "2026-11-03 14:02" before. */
export function sinceText(ms: number, nowMs: number): string {
  const d = new Date(ms);
  const two = (n: number): string => String(n).padStart(2, '0');
  const time = `${two(d.getHours())}:${two(d.getMinutes())}`;
  return d.toDateString() === new Date(nowMs).toDateString() ? time : `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${time}`;
}

export function formatPathStatus(p: PathStatus, nowMs: number = Date.now()): string {
  const lines = [`${esc(p.path)}: ${p.state}`, `  ${safeText(p.detail)}`];
  if (p.failure) {
    lines.push(`  last error: ${safeText(p.failure.message)} (${esc(p.failure.code)}, attempt ${p.failure.attempts}; next retry ${p.failure.nextRetryAtMs <= nowMs ? 'now' : `in ${formatWholeDuration(p.failure.nextRetryAtMs - nowMs)}`})`);
  }
  if (p.lastOperation) {
    const o = p.lastOperation;
    lines.push(`  last operation: ${o.kind} ${ago(nowMs, o.atMs)}, ${o.ok ? 'done' : `failed: ${o.error === undefined || o.error === null ? 'unknown error' : safeText(o.error)}`}`);
    lines.push(`  because: ${esc(o.reason)}`);
  }
  if (p.lock !== undefined) lines.push(`  lock: ${formatLock(p.lock)}`);
  return `${lines.join('\n')}\n`;
}

/** `boxsync status` when no daemon answers: the reason it last ended, when the state dir kept one. */
export function formatNotRunning(socketPath: string, last: LastExit | null, nowMs: number = Date.now()): string {
  const lines = [`no boxsync daemon is running (nothing answers on ${esc(socketPath)})`];
  if (last) lines.push(`  it last ended ${ago(nowMs, last.atMs)} with exit code ${last.code}: ${safeText(last.reason)}`);
  lines.push('  start it with `boxsync daemon` or `systemctl --user start boxsync`');
  return `${lines.join('\n')}\n`;
}

function watcherText(h: DaemonStatus['watchers'][number]['health']): string {
  switch (h.state) {
    case 'starting':
      return 'starting';
    case 'ok':
      return `ok, ${h.watches} inotify watches`;
    case 'degraded':
      return `DEGRADED: ${safeText(h.reason)}`;
  }
}

function ago(nowMs: number, atMs: number): string {
  return `${formatWholeDuration(nowMs - atMs)} ago (${new Date(atMs).toISOString()})`;
}
