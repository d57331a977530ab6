/** `boxsync history [PATH]`: the journal's operation log, for every root or one path and what was below it. */
import type { RelPath, SyncRoot } from '../../../core/model.js';
import type { HistoryResult, ItemRequest } from '../item-protocol.js';
import { rootAt, type ItemCommandDeps } from './context.js';

export function history(deps: ItemCommandDeps, req: Extract<ItemRequest, { command: 'history' }>): HistoryResult {
  const byRoot = new Map(deps.roots.map((r) => [r.id, r]));
  // History is kept for paths that are gone too: no journal row is needed.
  const scope: { root: SyncRoot; relPath: RelPath | '' } | null = req.path === undefined ? null : rootAt(deps.roots, req.path);
  const rows = deps.journal.operations({
    ...(scope ? { root: scope.root.id, ...(scope.relPath === '' ? {} : { path: scope.relPath }) } : {}),
    ...(req.sinceMs === undefined ? {} : { sinceMs: req.sinceMs }),
    limit: req.limit ?? 1000,
  });
  return {
    entries: rows.filter((r) => byRoot.has(r.root)).map((r) => ({ ...r, localPath: `${byRoot.get(r.root)!.localPath}/${r.path}` })),
  };
}
