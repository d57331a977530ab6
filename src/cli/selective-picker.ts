/**
 * `boxsync selective` on a terminal (issue 27 point 2): an interactive tree picker of the Box folders kept on this
 * disk, written as an @inquirer/core prompt. The folder pairs are the top rows; a folder's subfolders are listed
 * from Box only when it is expanded, one folder at a time, so the first screen needs no Box call and a huge account
 * opens at once. Each row has a checkbox (`[x]` synced, `[ ]` not synced, `[-]` partly: the states of
 * `selective list`, engine/selective.ts) and the folder's size on Box.
 *
 * Keys: up/down or k/j move; right or enter expands (left or enter collapses, left on a closed folder goes to its
 * parent); space toggles; `a` shows the change set and asks to confirm (y/enter applies, n/Esc goes back); q or
 * Esc quits with nothing changed (Ctrl-C too: the prompt ends with ExitPromptError).
 *
 * The prompt only chooses: it returns the change set, and runSelectivePicker applies each change through
 * applySelectionChange (selective-run.ts), the same door as `selective exclude|include`, with their safety rules.
 * A folder inside a folder that is not synced (now, or before this session) cannot be toggled: the whole folder
 * comes back first, and the choice inside it is made after that has been applied.
 */
import { createPrompt, useEffect, useKeypress, usePagination, useRef, useState, type KeypressEvent } from '@inquirer/core';
import { resolve } from 'node:path';
import type { Config } from '../config/index.js';
import { adapterForConfig } from './account-tools.js';
import { folderSize, listSubfolders, type BoxFolder } from '../engine/box-folders.js';
import type { BoxAdapter } from '../remote/box/index.js';
import { escapeText, safeText } from '../core/escape.js';
import { formatBytes } from '../core/format.js';
import type { RemoteId } from '../core/model.js';
import { selectionState, unselectedAt } from '../engine/selective.js';

/** A folder pair as the picker shows it: its index in `folders[]` and its selection when the picker opened. */
export interface PickerPair {
  readonly index: number;
  readonly localPath: string;
  readonly remoteId: RemoteId;
  readonly unselected: readonly string[];
}

export type { BoxFolder } from '../engine/box-folders.js';

/** How the picker reads Box: the subfolders of one folder (one listing), and one folder's size. */
export interface BoxFolders {
  list(id: RemoteId): Promise<readonly BoxFolder[]>;
  size(id: RemoteId): Promise<number | null>;
}

export interface PickedChange {
  readonly pair: number;
  readonly action: 'exclude' | 'include';
  /** The folder, relative to the pair's local folder. */
  readonly rel: string;
  /** The local folder (absolute), as `selective exclude|include` takes it. */
  readonly path: string;
  /** Its size on Box, as listed. */
  readonly sizeBytes: number | null;
}

export type PickerAnswer = { readonly apply: false } | { readonly apply: true; readonly changes: readonly PickedChange[] };

export interface PickerConfig {
  readonly pairs: readonly PickerPair[];
  readonly folders: BoxFolders;
  readonly pageSize?: number;
}

interface TreeNode {
  readonly key: string;
  readonly pair: number;
  readonly rel: string;
  readonly name: string;
  readonly depth: number;
  readonly id: RemoteId;
  size: number | null;
  open: boolean;
  loading: boolean;
  children?: string[];
  error?: string;
}

const keyOf = (pair: number, rel: string): string => `${pair}:${rel}`;
const parentRel = (rel: string): string => (rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '');

/**
 * Toggle the folder `rel` in a pair's working selection. `original` is the selection when the picker opened.
 * Returns the new selection, or a message saying why this folder cannot be toggled.
 */
export function toggleSelection(original: ReadonlySet<string>, working: ReadonlySet<string>, rel: string): { working: Set<string> } | { message: string } {
  if (rel === '') return { message: 'this is the top of a folder pair: to stop syncing it, remove the pair from the config' };
  const up = parentRel(rel);
  if (up !== '') {
    const holder = unselectedAt({ unselected: [...working] }, up) ?? unselectedAt({ unselected: [...original] }, up);
    if (holder !== undefined) {
      return working.has(holder)
        ? { message: `${escapeText(holder)}/ is not synced: select it to choose the folders inside it` }
        : { message: `${escapeText(holder)}/ comes back when this change is applied: choose the folders inside it after that` };
    }
  }
  const next = new Set(working);
  if (next.has(rel)) {
    next.delete(rel);
    return { working: next };
  }
  // Excluding a folder makes the choices made below it in this session moot; ones from the config stay as they are.
  for (const u of working) if (u.startsWith(`${rel}/`) && !original.has(u)) next.delete(u);
  next.add(rel);
  return { working: next };
}

/** What differs between the selection the picker opened with and the working one: excludes first, then includes. */
export function changeSet(pairs: readonly PickerPair[], working: readonly ReadonlySet<string>[], sizeOf: (pair: number, rel: string) => number | null): PickedChange[] {
  const out: PickedChange[] = [];
  for (const action of ['exclude', 'include'] as const) {
    pairs.forEach((p, i) => {
      const original = new Set(p.unselected);
      const now = working[i]!;
      const rels = action === 'exclude' ? [...now].filter((u) => !original.has(u)) : [...original].filter((u) => !now.has(u));
      for (const rel of rels.sort()) out.push({ pair: p.index, action, rel, path: resolve(p.localPath, rel), sizeBytes: sizeOf(i, rel) });
    });
  }
  return out;
}

const sizeText = (n: number | null): string => (n === null ? '' : formatBytes(n));
const BOX = { synced: '[x]', 'not synced': '[ ]', partly: '[-]' } as const;

export const selectivePicker = createPrompt<PickerAnswer, PickerConfig>((config, done) => {
  const { pairs, folders } = config;
  const nodes = useRef<Map<string, TreeNode> | null>(null);
  if (nodes.current === null) {
    nodes.current = new Map(
      pairs.map((p, i) => [keyOf(i, ''), { key: keyOf(i, ''), pair: i, rel: '', name: p.localPath, depth: 0, id: p.remoteId, size: null, open: false, loading: false }]),
    );
  }
  const tree = nodes.current;
  const working = useRef<Set<string>[]>(pairs.map((p) => new Set(p.unselected)));
  const finished = useRef(false);
  const [, setTick] = useState(0);
  const [activeKey, setActiveKey] = useState(keyOf(0, ''));
  const [message, setMessage] = useState('');
  const [confirming, setConfirming] = useState<PickedChange[] | null>(null);
  const rerender = (): void => {
    if (!finished.current) setTick((t) => t + 1);
  };
  const finish = (answer: PickerAnswer): void => {
    finished.current = true;
    done(answer);
  };

  // The pairs' own sizes come after the first screen, one call each, and never hold it.
  useEffect(() => {
    for (const node of [...tree.values()].filter((n) => n.depth === 0)) {
      folders.size(node.id).then(
        (size) => {
          node.size = size;
          rerender();
        },
        () => undefined,
      );
    }
  }, []);

  const rows: TreeNode[] = [];
  const walk = (key: string): void => {
    const node = tree.get(key)!;
    rows.push(node);
    if (node.open) for (const c of node.children ?? []) walk(c);
  };
  pairs.forEach((_, i) => walk(keyOf(i, '')));
  const active = Math.max(0, rows.findIndex((r) => r.key === activeKey));
  const current = rows[active];

  const expand = async (node: TreeNode): Promise<void> => {
    if (node.children !== undefined) {
      node.open = true;
      rerender();
      return;
    }
    if (node.loading) return;
    node.loading = true;
    node.error = undefined;
    rerender();
    try {
      const listed = [...(await folders.list(node.id))].sort((a, b) => a.name.localeCompare(b.name));
      node.children = listed.map((f) => {
        const rel = node.rel === '' ? f.name : `${node.rel}/${f.name}`;
        const child: TreeNode = { key: keyOf(node.pair, rel), pair: node.pair, rel, name: f.name, depth: node.depth + 1, id: f.id, size: f.sizeBytes, open: false, loading: false };
        tree.set(child.key, child);
        return child.key;
      });
      node.open = true;
    } catch (e) {
      node.error = safeText(e instanceof Error ? e.message : String(e), 200);
    } finally {
      node.loading = false;
      rerender();
    }
  };

  const onTreeKey = async (key: KeypressEvent): Promise<void> => {
    if (current === undefined) return;
    setMessage('');
    const at = (i: number): void => setActiveKey(rows[Math.min(rows.length - 1, Math.max(0, i))]!.key);
    if (key.name === 'up' || key.name === 'k') at(active - 1);
    else if (key.name === 'down' || key.name === 'j') at(active + 1);
    else if (key.name === 'right') await expand(current);
    else if (key.name === 'enter' || key.name === 'return') {
      if (current.open) {
        current.open = false;
        rerender();
      } else await expand(current);
    } else if (key.name === 'left') {
      if (current.open) {
        current.open = false;
        rerender();
      } else if (current.depth > 0) setActiveKey(keyOf(current.pair, parentRel(current.rel)));
    } else if (key.name === 'space') {
      const r = toggleSelection(new Set(pairs[current.pair]!.unselected), working.current[current.pair]!, current.rel);
      if ('message' in r) setMessage(r.message);
      else {
        working.current[current.pair] = r.working;
        rerender();
      }
    } else if (key.name === 'a') {
      const changes = changeSet(pairs, working.current, (pair, rel) => tree.get(keyOf(pair, rel))?.size ?? null);
      if (changes.length === 0) setMessage('nothing to apply: the selection is as it was');
      else setConfirming(changes);
    } else if (key.name === 'q' || key.name === 'escape') finish({ apply: false });
  };

  useKeypress(async (key) => {
    if (finished.current) return;
    if (confirming === null) return onTreeKey(key);
    if (key.name === 'y' || key.name === 'enter' || key.name === 'return') finish({ apply: true, changes: confirming });
    else if (key.name === 'n' || key.name === 'escape' || key.name === 'q') setConfirming(null);
  });

  // Every hook runs on every render (inquirer's hooks are by position), so the page is laid out even while confirming.
  const page = usePagination({
    items: rows,
    active,
    pageSize: config.pageSize ?? 15,
    loop: false,
    renderItem: ({ item, isActive }) => {
      const original = new Set(pairs[item.pair]!.unselected);
      const now = working.current[item.pair]!;
      const box = BOX[selectionState({ unselected: [...now] }, item.rel)];
      const arrow = item.loading ? '…' : item.children !== undefined && item.children.length === 0 ? ' ' : item.open ? '▾' : '▸';
      const name = item.depth === 0 ? escapeText(item.name) : `${escapeText(item.name)}/`;
      const change = item.rel === '' ? '' : now.has(item.rel) && !original.has(item.rel) ? '  (to exclude)' : original.has(item.rel) && !now.has(item.rel) ? '  (to include)' : '';
      const note = item.loading ? '  (listing from Box...)' : item.error !== undefined ? `  (could not list: ${item.error}; right to retry)` : item.open && item.children?.length === 0 ? '  (no subfolders)' : '';
      const size = sizeText(item.size);
      return `${isActive ? '❯' : ' '} ${'  '.repeat(item.depth)}${arrow} ${box} ${name}${size === '' ? '' : `  ${size}`}${change}${note}`;
    },
  });
  const title = 'Selective sync: the Box folders kept on this disk';
  if (confirming !== null) {
    const lines = confirming.map((c) => {
      const what = c.action === 'exclude' ? 'its local copy goes to the local trash; Box keeps it' : 'downloaded from Box';
      return `  ${c.action.padEnd(7)}  ${sizeText(c.sizeBytes).padStart(9)}  ${escapeText(c.path)}/  (${what})`;
    });
    const total = (action: 'exclude' | 'include'): number => confirming.filter((c) => c.action === action).reduce((s, c) => s + (c.sizeBytes ?? 0), 0);
    return [
      `${title}\nApply these changes? (nothing is deleted on Box; local changes in an excluded folder are uploaded first)\n${lines.join('\n')}`,
      `  ${formatBytes(total('exclude'))} freed here, ${formatBytes(total('include'))} to download.  y or enter: apply   n or Esc: back`,
    ];
  }

  const keys = '  ↑↓/jk move  →/← or enter expand/collapse  space toggle  a apply  q quit';
  return [`${title}\n${page}`, `${keys}${message === '' ? '' : `\n  ${message}`}`];
});

/** The picker's pairs from a config, and Box read through the same listing as `selective list` (one folder a call). */
export function pickerConfigFor(config: Pick<Config, 'folders'>, adapter: BoxAdapter): PickerConfig {
  return {
    pairs: config.folders.map((root, index) => ({ index, localPath: root.localPath, remoteId: root.remoteId, unselected: root.unselected ?? [] })),
    folders: {
      list: (id) => listSubfolders(adapter.store, id),
      size: (id) => folderSize(adapter.store, id),
    },
  };
}

export interface PickerContext {
  readonly input?: NodeJS.ReadableStream;
  /** The prompt's screen; the prompt ends it when done (process.stdout is never ended). */
  readonly output?: NodeJS.WritableStream;
  /** Where the lines after the prompt go (default stdout). */
  readonly report?: (line: string) => void;
}

/**
 * The picker on this config's folder pairs, then the change set applied one change at a time through
 * applySelectionChange. Exit codes as `selective exclude|include` (the worst of the changes applied); 0 when the
 * user quits (q, Esc) with nothing changed, 130 on Ctrl-C, 2 for config trouble.
 */
export async function runSelectivePicker(configPath: string | undefined, context: PickerContext = {}): Promise<number> {
  const out = context.report ?? ((line: string): void => void process.stdout.write(`${line}\n`));
  const fail = (line: string): void => void process.stderr.write(`boxsync selective: ${line}\n`);
  const { loadConfig } = await import('../config/index.js');
  const { ExitPromptError } = await import('@inquirer/core');
  let config;
  try {
    config = await loadConfig({ path: configPath });
  } catch (e) {
    fail(e instanceof Error ? e.message : String(e));
    return 2;
  }
  if (config.folders.length === 0) {
    fail('the config has no folder pairs to choose in');
    return 2;
  }
  const adapter = adapterForConfig(config);
  let answer: PickerAnswer;
  try {
    answer = await selectivePicker({ ...pickerConfigFor(config, adapter), pageSize: Math.max(5, (process.stdout.rows ?? 24) - 8) }, { input: context.input, output: context.output });
  } catch (e) {
    if (!(e instanceof ExitPromptError)) throw e;
    out('Nothing changed.');
    return 130;
  } finally {
    await adapter.close();
  }
  if (!answer.apply) {
    out('Nothing changed.');
    return 0;
  }
  const { applySelectionChange } = await import('./selective-run.js');
  let worst = 0;
  for (const c of answer.changes) {
    out(`${c.action === 'exclude' ? 'Excluding' : 'Including'} ${escapeText(c.path)}/ ...`);
    worst = Math.max(worst, await applySelectionChange(c.action, c.path, configPath));
  }
  return worst;
}
