/**
 * What `boxsync selective exclude|include PATH` changes in `folders[].selective.unselected`, decided from the config
 * as the file says now. Shared by the CLI (cli/selective-run.ts, no daemon) and the daemon's `selective` verb
 * (daemon/selective-command.ts), so both refuse and answer alike. Names are escaped here.
 */
import { pairHolding } from '../config/folder-pair.js';
import { resolve } from 'node:path';
import type { Config } from '../config/index.js';
import { escapeText } from '../core/escape.js';
import type { SyncRoot } from '../core/model.js';
import { unselectedAt } from '../core/unselected.js';

export interface SelectionTarget {
  readonly index: number;
  readonly root: SyncRoot;
  /** The folder, relative to the pair ('' for the top of the pair). */
  readonly rel: string;
}

export type SelectionChange =
  /** Nothing to do: `text` says why (exit 0). */
  | { readonly kind: 'unchanged'; readonly text: string }
  /** Refused: `text` says why (exit 2). */
  | { readonly kind: 'refused'; readonly text: string }
  /** Write `unselected` to `folders[index]`. `name` is the folder as shown ("Archive/"). */
  | { readonly kind: 'change'; readonly target: SelectionTarget; readonly name: string; readonly unselected: readonly string[] };

/** The folder pair holding a local path (the deepest, if pairs nest), and the path relative to it; null when none does. */
export function locateInPairs(config: Config, pathArg: string): SelectionTarget | null {
  const hit = pairHolding(config.folders, resolve(pathArg));
  return hit === null ? null : { index: hit.index, root: hit.pair, rel: hit.rel };
}

export function outsidePairs(config: Config, pathArg: string): string {
  return `${escapeText(resolve(pathArg))} is not inside any folder pair of ${escapeText(config.file)}`;
}

/** The change `selective exclude|include` makes for the folder at `t`. */
export function selectionChange(t: SelectionTarget, action: 'exclude' | 'include'): SelectionChange {
  const name = `${escapeText(t.rel)}/`;
  const listed = t.root.unselected ?? [];
  const at = unselectedAt(t.root, t.rel);
  if (action === 'exclude') {
    if (t.rel === '') return { kind: 'refused', text: `${escapeText(t.root.localPath)} is the top of a folder pair; to stop syncing it, remove the pair from the config` };
    if (at !== undefined) return { kind: 'unchanged', text: `${name} is already not selected (${escapeText(at)}/ is in folders[${t.index}].selective.unselected); nothing changed` };
    return { kind: 'change', target: t, name, unselected: [...listed, t.rel].sort() };
  }
  if (at === undefined) {
    const below = listed.filter((u) => t.rel === '' || u.startsWith(`${t.rel}/`));
    return { kind: 'unchanged', text: `${name} is already selected${below.length > 0 ? ` (folders below it that are not: ${below.map((u) => `${escapeText(u)}/`).join(', ')})` : ''}; nothing changed` };
  }
  if (at !== t.rel) return { kind: 'refused', text: `${name} is not selected because ${escapeText(at)}/ is not; include ${escapeText(at)} (the whole folder comes back)` };
  return { kind: 'change', target: t, name, unselected: listed.filter((u) => u !== t.rel) };
}

/** Why `selective exclude` stops when files in the folder hold content Box lacks: the lines to print (at most 50 named). */
export function holdersRefusal(name: string, holders: readonly string[]): string[] {
  const n = holders.length;
  return [
    `cannot exclude ${name}: ${n} file${n === 1 ? '' : 's'} there could not be uploaded, so removing the local copy would lose ${n === 1 ? 'it' : 'them'}; nothing was removed and ${name} stays selected:`,
    ...holders.slice(0, 50).map((h) => `  ${escapeText(h)}`),
    ...(n > 50 ? [`  ... and ${n - 50} more`] : []),
  ];
}
