/**
 * The work of `boxsync selective list|exclude|include` (commands/selective.ts has the contract). Output: stdout
 * for what the command did, stderr (through the sync's reporter) for the runs' progress and notes. Exit codes as
 * `sync --once`: 0 done, 1 not done for a named reason (files holding an exclude), 2 config or lock trouble.
 */
import { writeSelection } from '../config/edit-selection.js';
import { resolve } from 'node:path';
import { holdersRefusal, locateInPairs, outsidePairs, selectionChange, type SelectionChange } from '../engine/selection-change.js';
import type { SelectiveResult } from '../daemon/control/control-protocol.js';
import type { Config } from '../config/index.js';
import { escapeText, safeText } from '../core/escape.js';
import { formatBytes } from '../core/format.js';
import { asRelPath, type RelPath, type SyncRoot } from '../core/model.js';
import { checkAgainstBase } from '../engine/selective-free.js';
import { folderBelow, listSubfolders } from '../engine/box-folders.js';
import { selectionState } from '../engine/selective.js';
import { createIgnoreMatcher } from '../local/ignore.js';
import { lookOnlyLocalFs } from '../local/look-only.js';

const out = (line: string): void => void process.stdout.write(`${line}\n`);
const fail = (line: string): void => void process.stderr.write(`boxsync selective: ${line}\n`);

interface Located {
  readonly config: Config;
  readonly file: string;
  readonly index: number;
  readonly root: SyncRoot;
  readonly rel: string;
}

async function load(configPath: string | undefined): Promise<{ config: Config; file: string } | null> {
  const { loadConfig, configPath: pathOf } = await import('../config/index.js');
  try {
    return { config: await loadConfig({ path: configPath }), file: pathOf({ path: configPath }) };
  } catch (e) {
    fail(e instanceof Error ? e.message : String(e));
    return null;
  }
}

/** The folder pair holding a local path (the deepest, if pairs nest), and the path relative to it. */
async function locate(pathArg: string, configPath: string | undefined): Promise<Located | null> {
  const loaded = await load(configPath);
  if (loaded === null) return null;
  const t = locateInPairs(loaded.config, pathArg);
  if (t === null) fail(outsidePairs(loaded.config, pathArg));
  return t === null ? null : { ...loaded, ...t };
}

/** The pid of a running daemon on this state dir, or null; throws when another command holds the lock. */
async function runningDaemon(stateDir: string): Promise<number | null> {
  const { acquireStateLock, StateLockedError } = await import('../daemon/lock.js');
  try {
    acquireStateLock(stateDir, 'command').release();
    return null;
  } catch (e) {
    if (e instanceof StateLockedError && e.holder.purpose === 'daemon') return e.holder.pid;
    throw e;
  }
}

async function daemonOr(l: Located): Promise<number | null | 'busy'> {
  try {
    return await runningDaemon(l.config.stateDir);
  } catch (e) {
    fail(e instanceof Error ? e.message : String(e));
    return 'busy';
  }
}

/**
 * With a daemon running, the change goes to it over the control socket (daemon/selective-command.ts): it applies
 * it at once and answers with the outcome. Exit 0 applied (or nothing to do), 1 held or kept (the answer says
 * which files and why), 2 refused or no answer.
 */
async function viaDaemon(l: Located, pid: number, action: 'exclude' | 'include', freeSpace: boolean): Promise<number> {
  const { sendControl } = await import('../daemon/control/control-client.js');
  const { SELECTIVE_ANSWER_TIMEOUT_MS } = await import('../daemon/lifecycle/selective-command.js');
  const path = resolve(l.root.localPath, l.rel);
  out(`The daemon (pid ${pid}) applies this now${action === 'exclude' ? ' (local changes in the folder go to Box first)' : ''}...`);
  try {
    const r = await sendControl<SelectiveResult>(l.config.socketPath, { verb: 'selective', action, path, ...(freeSpace ? { freeSpace } : {}) }, SELECTIVE_ANSWER_TIMEOUT_MS);
    const lines = r.message.split('\n');
    if (r.outcome === 'held') for (const line of lines) fail(line);
    else for (const line of lines) out(line);
    return r.outcome === 'held' || r.outcome === 'kept' ? 1 : 0;
  } catch (e) {
    fail(`${e instanceof Error ? e.message : String(e)}`);
    return 2;
  }
}

/** A change with nothing to do (exit 0) or refused (exit 2), said. */
function decided(c: Exclude<SelectionChange, { kind: 'change' }>): number {
  if (c.kind === 'unchanged') {
    out(c.text);
    return 0;
  }
  fail(c.text);
  return 2;
}

export async function runSelectiveList(pathArg: string | undefined, configPath: string | undefined): Promise<number> {
  const { adapterForConfig } = await import('./account-tools.js');
  let targets: { root: SyncRoot; rel: string }[];
  let config: Config;
  if (pathArg === undefined) {
    const loaded = await load(configPath);
    if (loaded === null) return 2;
    config = loaded.config;
    targets = config.folders.map((root) => ({ root, rel: '' }));
  } else {
    const l = await locate(pathArg, configPath);
    if (l === null) return 2;
    config = l.config;
    targets = [{ root: l.root, rel: l.rel }];
  }
  const adapter = adapterForConfig(config);
  try {
    for (const { root, rel } of targets) {
      // One level at a time, from Box: the folder at `rel` is found by walking its names from the pair's folder.
      const id = await folderBelow(adapter.store, root.remoteId, rel, root.localPath);
      const folders = await listSubfolders(adapter.store, id);
      const here = resolve(root.localPath, rel);
      out(`${safeText(here)}  (Box folder ${id}; ${selectionState(root, rel)})`);
      for (const f of folders) {
        const childRel = rel === '' ? f.name : `${rel}/${f.name}`;
        out(`  ${selectionState(root, childRel).padEnd(10)}  ${formatBytes(f.sizeBytes).padStart(10)}  ${safeText(f.name)}/`);
      }
      if (folders.length === 0) out('  (no folders here)');
    }
    return 0;
  } catch (e) {
    fail(e instanceof Error ? e.message : String(e));
    return 2;
  } finally {
    await adapter.close();
  }
}

export async function runSelectiveExclude(pathArg: string, configPath: string | undefined, freeSpace: boolean): Promise<number> {
  const l = await locate(pathArg, configPath);
  if (l === null) return 2;
  const change = selectionChange(l, 'exclude');
  if (change.kind !== 'change') return decided(change);
  const { name, unselected } = change;
  const daemon = await daemonOr(l);
  if (daemon === 'busy') return 2;
  if (daemon !== null) return viaDaemon(l, daemon, 'exclude', freeSpace);
  const { runSyncOnce } = await import('./commands/sync.js');
  // 1. A sync with the folder still selected: what changed in it here goes to Box first.
  out(`Syncing once so that local changes in ${name} reach Box first...`);
  let holders: string[] = [];
  let notFolder = false;
  const first = await runSyncOnce({
    configPath,
    inspect: async (c) => {
      const root = c.roots.find((r) => r.id === l.root.id)!;
      const rel = asRelPath(l.rel);
      if (c.journal.getSynced(root.id, rel)?.kind !== 'folder') {
        notFolder = true;
        return;
      }
      const base = new Map([...c.journal.syncedUnder(root.id, rel)].map((s) => [s.path, s]));
      // A file here that is not what the last sync agreed on (its upload failed, or it changed since) holds the
      // folder; a failed download does not (the local file is still the agreed one, and Box has it).
      holders = (await checkAgainstBase(c.localFsFor(root), { path: rel, base })).holders;
    },
  });
  if (first === 2 || first === 3) {
    fail(`the sync before deselecting did not finish (exit ${first}); nothing changed: ${name} stays selected`);
    return first;
  }
  if (notFolder) {
    fail(`${name} is not a synced folder of ${escapeText(l.root.localPath)} (selective sync chooses Box folders); nothing changed`);
    return 2;
  }
  if (holders.length > 0) {
    for (const line of holdersRefusal(name, holders)) fail(line);
    return 1;
  }
  // 2. The selection, then a sync that forgets the folder's merge base and frees the disk (never a Box delete).
  await writeSelection(l.file, l.index, unselected);
  out(`${name} is now in folders[${l.index}].selective.unselected; syncing to free its local copy (${freeSpace ? 'removed' : 'to the local trash'}; Box keeps it)...`);
  const second = await runSyncOnce({ configPath, freeSpace });
  const left = await lookOnlyLocalFs(l.root.localPath).stat(asRelPath(l.rel)).catch(() => undefined);
  if (left !== undefined) {
    fail(`${name} is not selected, but its local copy is still here (see the note above for why); nothing was removed`);
    return second === 0 ? 1 : second;
  }
  out(`${name} is no longer kept on this disk; Box keeps it. \`boxsync selective include ${escapeText(l.rel)}\` brings it back.`);
  return second;
}

export async function runSelectiveInclude(pathArg: string, configPath: string | undefined): Promise<number> {
  const l = await locate(pathArg, configPath);
  if (l === null) return 2;
  const change = selectionChange(l, 'include');
  if (change.kind !== 'change') return decided(change);
  const { name, unselected } = change;
  const daemon = await daemonOr(l);
  if (daemon === 'busy') return 2;
  if (daemon !== null) return viaDaemon(l, daemon, 'include', false);
  await writeSelection(l.file, l.index, unselected);
  out(`${name} is selected again; downloading it (nothing is deleted on either side)...`);
  const { runSyncOnce } = await import('./commands/sync.js');
  const code = await runSyncOnce({ configPath });
  out(code === 0 ? `${name} is kept on this disk again.` : `${name} is selected; the sync did not finish (exit ${code}): the next sync picks up where it stopped.`);
  return code;
}

/**
 * Apply one change of selection: the one door for `selective exclude|include` and the picker (selective-picker.ts),
 * so that both take the same route (the sync before an exclude, the daemon when one runs) and the same safety rules.
 */
export async function applySelectionChange(action: 'exclude' | 'include', pathArg: string, configPath: string | undefined, freeSpace = false): Promise<number> {
  return action === 'exclude' ? runSelectiveExclude(pathArg, configPath, freeSpace) : runSelectiveInclude(pathArg, configPath);
}

/**
 * `boxsync ls`: the state of a Box folder (given by the chain of folders from the top of the account) for the
 * folder pairs of this config, or null when no pair holds it: `synced`, `not synced: not selected`, `partly`,
 * `not synced: excluded by the config`.
 */
export function syncStateOf(roots: readonly SyncRoot[], chain: readonly { id: string; name: string }[]): string | null {
  for (const root of roots) {
    const at = chain.findIndex((c) => c.id === root.remoteId);
    if (at < 0) continue;
    const rel = chain.slice(at + 1).map((c) => c.name).join('/');
    if (rel !== '' && createIgnoreMatcher(root.exclude)(rel, true)) return 'not synced: excluded by the config';
    const state = selectionState(root, rel);
    return state === 'not synced' ? 'not synced: not selected' : state;
  }
  return null;
}
