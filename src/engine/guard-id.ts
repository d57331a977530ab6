/**
 * The ids of the safety guards (delete-guard.ts, root-guard.ts, a new root) that a pass can hold: what
 * `boxsync status` shows and what `boxsync confirm ID` releases. One typed union, one spelling: every guard id is built and read here.
 */
import type { RootId } from '../core/model.js';

export type GuardId =
  /** More deletes in one pass than `safety.maxDeletes` and `maxDeleteFraction` allow; stable for the same count. */
  | { readonly kind: 'mass-delete'; readonly root: RootId; readonly deletes: number }
  /**
   * The Box folder of a root is gone or empty although files were in sync there; the local root folder is missing
   * (gone, another device or inode, no marker, an empty mount point) or suddenly empty (engine/root-guard.ts).
   */
  | { readonly kind: 'remote-root-missing' | 'remote-root-empty' | 'local-root-missing' | 'local-root-empty'; readonly root: RootId };

export type GuardKind = GuardId['kind'];

const ROOT_KINDS: ReadonlySet<string> = new Set(['remote-root-missing', 'remote-root-empty', 'local-root-missing', 'local-root-empty']);

export function guardIdText(g: GuardId): string {
  return g.kind === 'mass-delete' ? `mass-delete:${g.root}:${g.deletes}` : `${g.kind}:${g.root}`;
}

/** The id a user typed (or the control socket got), or null when it is not a guard id at all. */
export function parseGuardId(text: string): GuardId | null {
  const parts = text.split(':');
  const [kind, root, deletes] = parts;
  if (kind === undefined || root === undefined || root === '') return null;
  if (kind === 'mass-delete' && parts.length === 3 && /^[1-9]\d*$/.test(deletes ?? '')) {
    return { kind, root: root as RootId, deletes: Number(deletes) };
  }
  if (ROOT_KINDS.has(kind) && parts.length === 2) return { kind: kind as Exclude<GuardKind, 'mass-delete'>, root: root as RootId };
  return null;
}
