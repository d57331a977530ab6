/**
 * A root's ignore rules as the scope-change check (scope-change.ts) and selective sync (selective.ts) see them; its
 * own file so that those two, which use each other's work, do not import each other.
 */
import type { RelPath } from '../core/model.js';
import type { UnsyncedRecord } from '../ports/journal.js';

/** What decides a root's synced scope besides `root.exclude` and `root.direction` (EngineDeps.scopeRulesFor). */
export interface ScopeRules {
  /** Changes whenever the ignore rules of the root change (the config's exclude list, the `.boxsyncignore` lines). */
  readonly fingerprint: string;
  /** Which rule excludes an ignored path (asked only for paths the root's matcher ignores). */
  readonly reasonFor: (path: RelPath, isDir: boolean) => UnsyncedRecord['reason'];
}
