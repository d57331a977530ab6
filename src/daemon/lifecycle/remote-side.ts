/**
 * The remote half of the daemon: a long poll on the Box event stream whose hints feed the engine.
 *
 *   prepare(): pick the stream. For 'sync', mark every root folder sync_state=synced (and not_synced for roots
 *              that left the configuration), then check that the marking produced an ITEM_SYNC event within
 *              `syncCheckMs` (once per folder: verified folders are remembered in the journal, because Box
 *              emits ITEM_SYNC only when sync_state changes). Box Sync is discontinued, so if no event comes, or
 *              the folders cannot be marked, the daemon falls back to the 'changes' stream filtered to its
 *              roots, and status says so. Then take `stream_position=now`
 *              before the first pass, so changes made during it replay afterwards.
 *   run():     waitForChange from the journal's cursor → ask for a pass. The engine alone reads the events, from
 *              that one cursor, and stores it with what it observed, so a crash can never leave a change "seen"
 *              but not applied. The one look here (`ownWritesOnly`, the loop guard, only within a minute of our own
 *              writes to Box: engine echoesLikely) stores nothing: news that is
 *              only the echo of our own committed writes wakes no pass, and the long poll listens on past it.
 *              The long poll paces itself (RemoteChanges.waitForChange: a "changed" whose pass found nothing to
 *              move the cursor past backs off there, never a tight loop). An error outside it (taking
 *              the start position) reconnects with the stream backoff (1 s doubling to 60 s); a position that is
 *              too old falls back to a full listing. A fatal error (the login
 *              was revoked or refused, a refresh failed) stops the stream and goes to `onFatal`: the daemon
 *              exits with it even while idle, when the long poll is the only thing talking to Box.
 */
import { isSyncError } from '../../core/errors.js';
import { nominalDelayMs, streamBackoff } from '../../core/retry.js';
import { asRemoteId, type SyncRoot } from '../../core/model.js';
import type { Engine } from '../../engine/types.js';
import type { Logger } from '../../logger.js';
import type { Journal } from '../../ports/journal.js';
import type { RemoteChanges, StreamType } from '../../ports/remote-changes.js';
import type { RemoteStore } from '../../ports/remote-store.js';
import type { RemoteStreamStatus } from '../control/control-protocol.js';
import type { PassRunner } from './pass-runner.js';

export interface RemoteSideDeps {
  readonly roots: readonly SyncRoot[];
  readonly engine: Engine;
  readonly journal: Journal;
  readonly remote: RemoteStore;
  readonly changes: RemoteChanges;
  readonly passes: PassRunner;
  readonly log: Logger;
  readonly streamType: StreamType;
  /** How long to wait for the ITEM_SYNC event that proves the `sync` stream works (default 5 s). */
  readonly syncCheckMs?: number;
  /**
   * The stream stopped on a fatal error (a revoked or refused token, a failed refresh, a locked account): the
   * session ends the daemon with it, so an idle daemon does not live on with nothing listening.
   */
  readonly onFatal?: (message: string) => void;
}

/** While a pass runs after a 'changed', how often the long poll looks whether the engine read the stream. */
const CURSOR_CHECK_MS = 50;

/** Journal meta keys: the root folder ids this daemon marked sync_state=synced, and those whose ITEM_SYNC it saw. */
const MARKED_KEY = 'daemon:sync-marked-folders';
const VERIFIED_KEY = 'daemon:sync-verified-folders';

export class RemoteSide {
  private position: string | null = null;
  private effective: StreamType;
  private readonly abort = new AbortController();
  private loop: Promise<void> | null = null;
  private backoffMs = 0;
  private state: RemoteStreamStatus;
  /** The long poll's position past news that held only our own writes, while the engine's cursor is still `from`. */
  private ownUpTo: { from: string; to: string } | null = null;

  constructor(private readonly deps: RemoteSideDeps) {
    this.effective = deps.streamType;
    this.state = { configured: deps.streamType, effective: deps.streamType, state: 'starting', note: null, lastEventAtMs: null, nextRetryAtMs: null };
  }

  status(): RemoteStreamStatus {
    return this.state;
  }

  async prepare(): Promise<void> {
    if (this.deps.streamType === 'sync') {
      try {
        await this.setUpSyncStream();
      } catch (e) {
        if (isSyncError(e) && e.disposition === 'fatal') throw e;
        this.fallBack(`could not mark the root folders sync_state=synced (${e instanceof Error ? e.message : String(e)})`);
      }
    } else {
      await this.unmarkLeftRoots(new Set());
    }
    this.deps.engine.useStream(this.effective);
    this.position = await this.deps.changes.now(this.effective);
    // The first listing's cursor: a Box change made while the daemon starts is read as an event (observe-remote.ts).
    this.deps.engine.useStream(this.effective, this.position);
  }

  start(): void {
    this.loop ??= this.run();
  }

  async close(): Promise<void> {
    this.abort.abort(new Error('daemon stopping'));
    await this.loop?.catch(() => undefined);
    this.update({ state: 'stopped', nextRetryAtMs: null });
  }

  private failures = 0;

  /** The engine's cursor for the stream in use: the one position that counts. */
  private cursor(): string | null {
    return this.deps.journal.getCursor(`events:${this.effective}`) ?? null;
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      try {
        const stored = this.cursor();
        if (stored === null && this.position === null) this.position = await this.deps.changes.now(this.effective);
        const base = stored ?? this.position!;
        // Past news that was only our own writes (the journal's cursor stays where the engine stored it).
        const position = this.ownUpTo?.from === base ? this.ownUpTo.to : base;
        this.update({ state: 'listening', nextRetryAtMs: null });
        const r = await this.deps.changes.waitForChange(this.effective, position, signal);
        if (r === 'changed') await this.askForPass(position, base);
        this.backoffMs = 0;
        this.failures = 0;
      } catch (e) {
        if (signal.aborted) return;
        if (isSyncError(e) && e.code === 'stream_position_invalid') {
          this.deps.log.warn('the stored event stream position is too old; falling back to a full listing');
          this.position = null;
          this.update({ note: 'event stream position expired; ran a full listing' });
          this.deps.passes.request('full');
          continue;
        }
        if (isSyncError(e) && e.disposition === 'fatal') {
          this.deps.log.error({ err: e }, `remote event stream stopped: ${e.message}`);
          this.update({ state: 'stopped', note: e.message, nextRetryAtMs: null });
          this.deps.onFatal?.(e.message);
          return;
        }
        this.failures += 1;
        this.backoffMs = nominalDelayMs(streamBackoff, this.failures);
        const message = e instanceof Error ? e.message : String(e);
        this.deps.log.warn({ err: e, retryInMs: this.backoffMs }, `remote event stream broke (${message}); reconnecting in ${Math.round(this.backoffMs / 1000)} s`);
        this.update({ state: 'reconnecting', note: `reconnecting after: ${message}`, nextRetryAtMs: Date.now() + this.backoffMs });
        await sleep(this.backoffMs, signal);
        // Events may have been missed while the stream was down: the pass after reconnecting catches up.
        this.deps.passes.request('hint');
      }
    }
  }

  /**
   * Box says something changed: a hinted pass reads it (the engine fetches from the cursor). The next long poll
   * waits until the engine has read the stream past `position` (its cursor moved: a pass, or the live sync of a
   * long pass between its windows) or no pass runs: polling again from the same position would only hear the
   * same news. Waiting for the passes to end instead left a Box change made during a long first pass unheard
   * until that pass ended.
   */
  private async askForPass(position: string, base: string): Promise<void> {
    this.update({ lastEventAtMs: Date.now(), note: this.state.effective === this.state.configured ? null : this.state.note });
    // While a pass runs, its writes are rarely committed yet when their news comes: that pass reads it (below).
    // Only after writes of ours can the news be their echo: otherwise a change on Box costs one GET /events, the pass's.
    const own = !this.deps.passes.busy && this.deps.engine.echoesLikely?.() !== false && (await this.ownWritesOnly(position, base));
    if (own) return;
    this.deps.engine.hintRemote([]);
    // A pass running now reads the news itself (between its windows, beside a big transfer, or at its end, once
    // its own writes are committed): asking for another would only read the echoes of those writes.
    if (!this.deps.passes.busy) this.deps.passes.request('hint');
    const signal = this.abort.signal;
    const idle = this.deps.passes.idle();
    let ended = false;
    void idle.then(
      () => (ended = true),
      () => (ended = true),
    );
    while (!ended && !signal.aborted && (this.cursor() ?? base) === base) await Promise.race([idle, sleep(CURSOR_CHECK_MS, signal)]);
    // News the pass that ran meanwhile did not read (it came after its last look): a look from the engine's cursor,
    // and a pass unless it is only our own writes or nothing new.
    if (signal.aborted || this.deps.passes.busy || this.deps.engine.hasRemoteNews?.() === false) return;
    const at = this.cursor() ?? base;
    if (!(await this.ownWritesOnly(at, at, true))) this.deps.passes.request('hint');
  }

  /**
   * The loop guard: is the news only the echo of this process's own committed writes (uploads, moves, folder
   * creates come back as events)? The events from `position` are read without storing anything (the engine's
   * cursor stays: after a crash they replay, and the engine skips them as echoes), and when every one is ours the
   * long poll listens on past them and no pass is woken. A pass's own writes so never start another pass, which
   * would write nothing yet read the stream again. One `GET /events` per change announced while no pass runs (a
   * full page with more after it is news: the pass reads it).
   */
  private async ownWritesOnly(position: string, base: string, nothingIsOwn = false): Promise<boolean> {
    const engine = this.deps.engine;
    if (engine.onlyOwnEchoes === undefined) return false;
    const batch = await this.deps.changes.fetch(this.effective, position, { stopAtShortPage: true, maxPages: 1 });
    // `nothingIsOwn`: a look from the engine's cursor that finds nothing new means the news was read already.
    if (batch.nextPosition === position) return nothingIsOwn;
    if (batch.more === true || !engine.onlyOwnEchoes(batch.hints)) return false;
    this.ownUpTo = { from: base, to: batch.nextPosition };
    return true;
  }

  private async setUpSyncStream(): Promise<void> {
    const wanted = new Set(this.deps.roots.map((r) => r.remoteId as string));
    await this.unmarkLeftRoots(wanted);
    const verified = new Set(this.readList(VERIFIED_KEY).filter((id) => wanted.has(id)));
    const toCheck = [...wanted].filter((id) => !verified.has(id));
    if (toCheck.length > 0) {
      const before = await this.deps.changes.now('sync');
      // Box emits ITEM_SYNC only on a change of sync_state, so a folder marked before is unmarked first.
      for (const id of toCheck) {
        await this.deps.remote.setSyncState(asRemoteId(id), 'not_synced');
        await this.deps.remote.setSyncState(asRemoteId(id), 'synced');
      }
      this.deps.journal.setMeta(MARKED_KEY, JSON.stringify([...wanted]));
      const missing = await this.waitForSyncEvents(before, new Set(toCheck));
      for (const id of toCheck) if (!missing.has(id)) verified.add(id);
      this.deps.journal.setMeta(VERIFIED_KEY, JSON.stringify([...verified]));
      if (missing.size > 0) {
        this.fallBack(`no ITEM_SYNC event arrived within ${Math.round((this.deps.syncCheckMs ?? 5_000) / 1000)} s of marking the root folders synced (Box Sync is discontinued)`);
        return;
      }
    }
    this.update({ effective: 'sync', note: null });
    this.deps.log.info('consuming the sync event stream (root folders marked sync_state=synced)');
  }

  private fallBack(why: string): void {
    this.effective = 'changes';
    const note = `${why}; using the changes stream filtered to the roots instead`;
    this.update({ effective: 'changes', note });
    this.deps.log.warn(note);
  }

  private readList(key: string): string[] {
    try {
      const v = JSON.parse(this.deps.journal.getMeta(key) ?? '[]') as unknown;
      return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
    } catch {
      return [];
    }
  }

  private async unmarkLeftRoots(wanted: ReadonlySet<string>): Promise<void> {
    const left = this.readList(MARKED_KEY).filter((id) => !wanted.has(id));
    for (const id of left) {
      try {
        await this.deps.remote.setSyncState(asRemoteId(id), 'not_synced');
        this.deps.log.info({ folderId: id }, 'Box folder left the configuration: marked sync_state=not_synced');
      } catch (e) {
        this.deps.log.warn({ err: e, folderId: id }, 'could not mark a former root not_synced; it stays marked on Box');
      }
    }
    const stillMarked = this.readList(MARKED_KEY).filter((id) => wanted.has(id));
    this.deps.journal.setMeta(MARKED_KEY, JSON.stringify(stillMarked));
    this.deps.journal.setMeta(VERIFIED_KEY, JSON.stringify(this.readList(VERIFIED_KEY).filter((id) => wanted.has(id))));
  }

  /** The folders whose ITEM_SYNC did not arrive in time. */
  private async waitForSyncEvents(from: string, wanted: ReadonlySet<string>): Promise<Set<string>> {
    const deadline = Date.now() + (this.deps.syncCheckMs ?? 5_000);
    const missing = new Set(wanted);
    let position = from;
    while (missing.size > 0 && Date.now() < deadline) {
      const batch = await this.deps.changes.fetch('sync', position);
      position = batch.nextPosition;
      for (const h of batch.hints) if (h.syncStateSet) missing.delete(h.id);
      if (missing.size > 0) await sleep(200, this.abort.signal).catch(() => undefined);
    }
    return missing;
  }

  private update(patch: Partial<RemoteStreamStatus>): void {
    this.state = { ...this.state, ...patch };
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });
}
