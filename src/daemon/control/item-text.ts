/**
 * Readable output of the item commands. Paths, names and anything Box sent are escaped (core/escape.ts) before
 * they reach the terminal; `--json` prints the results as they are instead.
 */
import { escapeText, safeText } from '../../core/escape.js';
import { formatBytes } from '../../core/format.js';
import type { ItemResult } from './items/item-commands.js';
import type { ConflictsResult, TrashListResult, HistoryResult, ItemCommandName, ItemInfoResult, LockView, MessageResult, SelectiveTreeResult, ShareResult, VersionsResult } from './item-protocol.js';

const iso = (ms: number | null): string => (ms === null ? '-' : new Date(ms).toISOString());

export function formatLock(lock: LockView | null): string {
  if (!lock) return 'none';
  const who = lock.ours ? 'locked by you' : `locked by another user (id ${escapeText(lock.byUserId ?? 'unknown')})`;
  const until = lock.expiresAtMs === null ? '' : `, until ${iso(lock.expiresAtMs)}`;
  return `${who}${until}${lock.preventDownload ? ', download prevented' : ''}`;
}

function formatInfo(r: ItemInfoResult): string {
  const lines = [
    `${escapeText(r.path)}`,
    `  Box ${r.kind}:    ${escapeText(r.boxId)}`,
    `  etag:          ${escapeText(r.etag)}`,
  ];
  if (r.kind === 'file') {
    lines.push(`  version id:    ${escapeText(r.versionId ?? '-')}`);
    lines.push(`  size:          ${formatBytes(r.sizeBytes)} (${r.sizeBytes} bytes)`);
    lines.push(`  SHA-1:         ${escapeText(r.sha1 ?? '-')}`);
  }
  lines.push(`  sync state:    ${r.state}: ${escapeText(r.stateDetail)}`);
  if (r.kind === 'file') lines.push(`  lock:          ${formatLock(r.lock)}`);
  if (r.sharedLink) {
    const l = r.sharedLink;
    const extra = [l.access ? `access ${escapeText(l.access)}` : null, l.passwordEnabled ? 'password' : null, l.expiresAtMs ? `expires ${iso(l.expiresAtMs)}` : null].filter(Boolean);
    lines.push(`  shared link:   ${escapeText(l.url)}${extra.length ? ` (${extra.join(', ')})` : ''}`);
  } else {
    lines.push('  shared link:   none');
  }
  lines.push(`  web:           ${escapeText(r.webUrl)}`);
  const op = r.lastOperation;
  lines.push(
    op
      ? `  last operation: ${op.kind} at ${iso(op.atMs)}${op.ok ? '' : ' (FAILED)'}: ${escapeText(op.reason)}${op.error ? `: ${safeText(op.error)}` : ''}`
      : '  last operation: none recorded',
  );
  return `${lines.join('\n')}\n`;
}

function formatVersions(r: VersionsResult): string {
  const lines = [`${escapeText(r.path)} (Box file ${escapeText(r.boxId)}): ${r.versions.length} version${r.versions.length === 1 ? '' : 's'}`];
  lines.push(`  ${'version id'.padEnd(14)} ${'size'.padStart(10)}  ${'modified'.padEnd(24)}  by`);
  for (const v of r.versions) {
    lines.push(`  ${escapeText(v.id).padEnd(14)} ${formatBytes(v.sizeBytes).padStart(10)}  ${iso(v.modifiedAtMs).padEnd(24)}  ${escapeText(v.by ?? '-')}${v.current ? '  (current)' : ''}`);
  }
  return `${lines.join('\n')}\n`;
}

function formatHistory(r: HistoryResult): string {
  if (r.entries.length === 0) return 'no operations recorded\n';
  // Oldest first, like a log.
  return `${[...r.entries]
    .reverse()
    .map((e) => `${iso(e.atMs)}  ${e.ok ? '' : 'FAILED '}${e.kind.padEnd(20)} ${escapeText(e.localPath)}  (${escapeText(e.reason)})${e.error ? `: ${safeText(e.error)}` : ''}`)
    .join('\n')}\n`;
}

function formatConflicts(r: ConflictsResult): string {
  if (r.conflicts.length === 0) return 'no conflict copies\n';
  const lines: string[] = [];
  for (const c of r.conflicts) {
    lines.push(escapeText(c.copyPath));
    lines.push(`  conflicts with: ${escapeText(c.originalPath)} (copy made ${iso(c.madeAtMs)})`);
    lines.push(`  yours (local):  ${formatBytes(c.local.sizeBytes)}, modified ${iso(c.local.mtimeMs)}`);
    lines.push(c.remote ? `  Box version:    ${formatBytes(c.remote.sizeBytes)}, modified ${iso(c.remote.modifiedAtMs)} (Box file ${escapeText(c.remote.boxId)})` : '  Box version:    none any more');
  }
  lines.push(`${r.conflicts.length} conflict cop${r.conflicts.length === 1 ? 'y' : 'ies'}; settle one with \`boxsync conflicts resolve PATH --keep local|remote|both\``);
  return `${lines.join('\n')}\n`;
}

function formatTrash(r: TrashListResult): string {
  if (r.entries.length === 0) return 'nothing deleted under the synced folders is in the Box trash or the local trash\n';
  const lines = r.entries.map(
    (e) => `${iso(e.trashedAtMs)}  ${(e.source === 'box' ? 'Box trash' : 'local trash').padEnd(11)}  ${escapeText(e.id).padEnd(28)} ${e.kind.padEnd(7)} ${formatBytes(e.sizeBytes).padStart(9)}  ${escapeText(e.path)}`,
  );
  lines.push('restore one with `boxsync trash restore PATH|ID [--to DIR] [--name NAME]`');
  return `${lines.join('\n')}\n`;
}

export function formatItemResult(command: ItemCommandName, r: ItemResult): string {
  switch (command) {
    case 'info':
      return formatInfo(r as ItemInfoResult);
    case 'share':
      return `${escapeText((r as ShareResult).printed)}\n`;
    case 'versions':
      return formatVersions(r as VersionsResult);
    case 'history':
      return formatHistory(r as HistoryResult);
    case 'conflicts':
      return formatConflicts(r as ConflictsResult);
    case 'trash-list':
      return formatTrash(r as TrashListResult);
    case 'selective-tree': {
      const t = r as SelectiveTreeResult;
      const rows = t.folders.map((f) => `  ${f.state.padEnd(10)}  ${escapeText(f.name)}/`);
      return `${[`${escapeText(t.path)}  (${t.state}; ${t.total} folder${t.total === 1 ? '' : 's'} on Box)`, ...rows].join('\n')}\n`;
    }
    case 'trash-restore':
    case 'conflicts-resolve':
    case 'unshare':
    case 'lock':
    case 'unlock':
    case 'restore-version':
      return `${(r as MessageResult).message}\n`;
    default: {
      const never: never = command;
      return `${String(never)}\n`;
    }
  }
}
