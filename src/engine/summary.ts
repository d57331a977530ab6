/**
 * The one-line summary of a run (`sync --once` ends with it; the daemon logs it after every pass).
 */
import { formatBytesOneDecimal } from '../core/format.js';
import type { OperationKind } from '../core/operations.js';
import type { RunSummary } from './types.js';

const count = (ops: RunSummary['ops'], ...kinds: OperationKind[]): number => kinds.reduce((n, k) => n + (ops[k] ?? 0), 0);

export function summaryMessage(s: Omit<RunSummary, 'message'>, extra: { reported: number; why: string | null }): string {
  const head: Record<RunSummary['outcome'], string> = {
    converged: 'in sync',
    'failed-items': 'some items failed and will be retried',
    fatal: 'stopped',
    guard: 'stopped by a safety guard',
  };
  const parts = [
    `${count(s.ops, 'download', 'write-weblink')} downloaded (${formatBytesOneDecimal(s.downloadedBytes)})`,
    `${count(s.ops, 'upload', 'upload-version')} uploaded (${formatBytesOneDecimal(s.uploadedBytes)})`,
    `${count(s.ops, 'local-move', 'remote-move')} moved`,
    `${count(s.ops, 'local-trash', 'remote-trash')} trashed`,
    `${count(s.ops, 'create-local-folder', 'create-remote-folder')} folders created`,
    `${count(s.ops, 'link')} linked`,
    `${s.conflicts} conflicts`,
    `${s.failedItems} failed`,
    `${s.parkedItems} parked`,
    `${extra.reported} reported`,
  ];
  const tail = `${s.passes} passes, ${(s.durationMs / 1000).toFixed(1)} s`;
  return `${head[s.outcome]}: ${parts.join(', ')}; ${tail}${extra.why ? ` (${extra.why})` : ''}`;
}
