/**
 * The control verb `selective`: `boxsync selective exclude|include PATH` with a daemon running.
 * The daemon applies the change at once and answers with the outcome; no restart, no second reload path:
 *
 * exclude: the folder is checked against the merge base (engine/selective-free.ts checkAgainstBase). A file there
 *   with content Box lacks gets a pass now (its upload), and is checked again; one still holding the folder stops
 *   the exclude (outcome `held`, the files named, nothing written). Then the config key is written (the way the
 *   CLI writes it: config/edit-selection.ts) and the configuration reloaded by the SIGHUP path (daemon.ts): the
 *   running session stops (a download in flight finishes within the shutdown bound, or is abandoned and its temp
 *   file removed) and the new one's first pass forgets the folder's merge base and frees it (local trash, or
 *   removed with `freeSpace`). The answer is that pass's notice for the folder. Nothing is deleted on Box.
 * include: the key is written, the configuration reloaded, and the answer waits until the new session has the
 *   folder as "downloading for selective sync" (engine/selective.ts readSelecting) or has finished its pass.
 *
 * Every wait is bounded (the answer then says the change is applied and the pass still running) and ends when the
 * daemon stops. Requests are serialized with SIGHUP reloads by the caller (daemon.ts).
 */
import { join } from 'node:path';
import type { Config } from '../../config/index.js';
import { writeSelection } from '../../config/edit-selection.js';
import { holdersRefusal, locateInPairs, outsidePairs, selectionChange, type SelectionTarget } from '../../engine/selection-change.js';
import { escapeText } from '../../core/escape.js';
import { asRelPath, type RelPath, type RootId } from '../../core/model.js';
import { checkAgainstBase, freeNoticeHead } from '../../engine/selective-free.js';
import { readSelecting } from '../../engine/selective.js';
import type { EngineEvents } from '../../engine/types.js';
import type { Logger } from '../../logger.js';
import type { ControlRequest, SelectiveResult } from '../control/control-protocol.js';
import type { DaemonSession } from './session.js';

/** How long the answer waits for a pass (the upload before an exclude; the new session's first pass). */
export const SELECTIVE_PASS_BOUND_MS = 120_000;
/** What the CLI waits for the answer: both passes and a reload, with room. */
export const SELECTIVE_ANSWER_TIMEOUT_MS = 2 * SELECTIVE_PASS_BOUND_MS + 60_000;
const POLL_MS = 100;
/** Notices remembered for the answer (the newest). */
const NOTICES_KEPT = 200;

type SelectiveRequest = Extract<ControlRequest, { verb: 'selective' }>;
type Notice = Parameters<NonNullable<EngineEvents['onNotice']>>[0];

export interface SelectiveCommandDeps {
  /** The running session, or null while one is swapped. */
  readonly session: () => DaemonSession | null;
  /** The config file as it is now (the running session's copy may lag: `newFolders: "skip"` writes the file). */
  readonly loadConfig: () => Promise<Config>;
  /** The SIGHUP reload: null when the new configuration runs, else why it does not (the old one still runs). */
  readonly reload: () => Promise<string | null>;
  readonly stopping: () => boolean;
  readonly log: Logger;
}

export class SelectiveCommand {
  private readonly notices: { root: RootId | null; text: string; seq: number }[] = [];
  private seq = 0;
  private removeOutright = false;

  constructor(private readonly deps: SelectiveCommandDeps) {}

  /** The sessions' engine notices (DaemonSessionHooks.onNotice). */
  readonly onNotice = (n: Notice): void => {
    this.notices.push({ root: n.root, text: n.text, seq: ++this.seq });
    if (this.notices.length > NOTICES_KEPT) this.notices.splice(0, this.notices.length - NOTICES_KEPT);
  };

  /** DaemonSessionHooks.freeSpace: true only while an `exclude --free-space` is being applied. */
  readonly freeSpace = (): boolean => this.removeOutright;

  async run(req: SelectiveRequest): Promise<SelectiveResult> {
    let config: Config;
    try {
      config = await this.deps.loadConfig();
    } catch (e) {
      throw new Error(`${e instanceof Error ? e.message : String(e)}; nothing changed`);
    }
    const target = locateInPairs(config, req.path);
    if (target === null) throw new Error(outsidePairs(config, req.path));
    const change = selectionChange(target, req.action);
    if (change.kind === 'unchanged') return { outcome: 'unchanged', message: change.text };
    if (change.kind === 'refused') throw new Error(change.text);
    const session = this.running();
    const where = `folders[${target.index}].selective.unselected of ${escapeText(config.file)}`;
    if (req.action === 'exclude') {
      const held = await this.holders(session, target, change.name);
      if (held !== null) return held;
    }
    const before = target.root.unselected ?? [];
    await writeSelection(config.file, target.index, change.unselected);
    const since = this.seq;
    this.removeOutright = req.action === 'exclude' && req.freeSpace === true;
    try {
      const why = await this.deps.reload();
      if (why !== null) {
        // The running configuration is the old one: the file goes back to it, so the two agree.
        await writeSelection(config.file, target.index, before).catch((e: unknown) => this.deps.log.warn({ err: e }, 'could not put the selection back'));
        throw new Error(`the daemon could not apply the new selection (${why}); it runs as before and ${escapeText(config.file)} was put back; nothing changed`);
      }
      const now = this.running();
      return req.action === 'exclude' ? await this.excluded(now, target, change.name, where, since) : await this.included(now, target, change.name, where);
    } finally {
      this.removeOutright = false;
    }
  }

  private running(): DaemonSession {
    const s = this.deps.session();
    if (s === null || this.deps.stopping()) throw new Error('the daemon is stopping or reloading; nothing changed, ask again in a moment');
    return s;
  }

  /**
   * The files under the folder with content Box lacks, after a pass for them if there are any: null when none is
   * left (the exclude goes on), else the `held` answer. Refuses a path that is not a synced folder.
   */
  private async holders(session: DaemonSession, t: SelectionTarget, name: string): Promise<SelectiveResult | null> {
    const { journal, localFsFor, engine } = session.parts;
    const rel = asRelPath(t.rel);
    if (journal.getSynced(t.root.id, rel)?.kind !== 'folder') {
      throw new Error(`${name} is not a synced folder of ${escapeText(t.root.localPath)} (selective sync chooses Box folders); nothing changed`);
    }
    if (localFsFor === undefined) throw new Error('this daemon cannot look at its folders on disk; nothing changed');
    const check = async (): Promise<RelPath[]> => {
      const base = new Map([...journal.syncedUnder(t.root.id, rel)].map((s) => [s.path, s]));
      return (await checkAgainstBase(localFsFor(t.root), { path: rel, base })).holders;
    };
    let holders = await check();
    if (holders.length === 0) return null;
    // Local changes reach Box first: a pass that looks at the folder now.
    engine.hintLocal(t.root.id, [rel]);
    session.passes.request('hint');
    await this.until(() => !session.passes.busy);
    holders = await check();
    if (holders.length === 0) return null;
    return { outcome: 'held', message: holdersRefusal(name, holders).join('\n') };
  }

  private async excluded(session: DaemonSession, t: SelectionTarget, name: string, where: string, since: number): Promise<SelectiveResult> {
    const head = freeNoticeHead(t.rel);
    const notice = (): string | undefined => this.notices.find((n) => n.seq > since && n.root === t.root.id && n.text.startsWith(head))?.text;
    const done = await this.until(() => notice() !== undefined || this.firstPassDone(session));
    const said = notice();
    const gone = (await session.parts.localFsFor(t.root).stat(asRelPath(t.rel)).catch(() => undefined)) === undefined;
    const top = `${name} is now in ${where}; the daemon applied it at once (nothing is deleted on Box).`;
    if (said !== undefined) return { outcome: gone ? 'applied' : 'kept', message: `${top}\n${said}` };
    if (!done) return { outcome: 'pending', message: `${top}\nIts first pass with the new selection is still running; \`boxsync status\` shows how it goes.` };
    return { outcome: gone ? 'applied' : 'kept', message: gone ? `${top}\nThere was no local copy to free.` : `${top}\nIts local copy is still here; the daemon's log says why.` };
  }

  private async included(session: DaemonSession, t: SelectionTarget, name: string, where: string): Promise<SelectiveResult> {
    const coming = (): boolean => readSelecting(session.parts.journal, t.root.id).includes(t.rel);
    const done = await this.until(() => coming() || this.firstPassDone(session));
    const top = `${name} is selected again (removed from ${where}); the daemon applied it at once (nothing is deleted on either side).`;
    const status = `\`boxsync status ${escapeText(join(t.root.localPath, t.rel))}\``;
    if (coming()) return { outcome: 'applied', message: `${top}\nIt is downloading now; ${status} shows it as "downloading for selective sync" until it is down.` };
    if (!done) return { outcome: 'pending', message: `${top}\nIts first pass with the new selection is still running; ${status} shows how it goes.` };
    return { outcome: 'applied', message: `${top}\nIt is kept on this disk again.` };
  }

  private firstPassDone(session: DaemonSession): boolean {
    return session.passes.passCount > 0 && !session.passes.busy;
  }

  /** Poll `probe` until it holds (true), the bound passes or the daemon stops (false). */
  private async until(probe: () => boolean): Promise<boolean> {
    const end = Date.now() + SELECTIVE_PASS_BOUND_MS;
    while (!probe()) {
      if (Date.now() >= end || this.deps.stopping()) return false;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    return true;
  }
}
