/**
 * Persistence for `--data DIR`: a snapshot (`state.json`, replaced atomically: temp file, fsync, rename, fsync of
 * the directory) plus an append-only journal (`journal.jsonl`, fsynced per flush) of what changed since: changed
 * and deleted items, new events, the small collections (users, tokens, clients, sessions) when they changed, and
 * the counters. A flush happens before any answer to a change, so a kill -9 loses nothing that was answered; a
 * torn last journal line is ignored. The journal is folded into a new snapshot when it grows past the snapshot's
 * size, and on close. Journal lines carry the snapshot generation, so a journal left over from an older snapshot
 * is never replayed onto a newer one.
 */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { ItemRec, ServerState } from './state.js';

const snapshotFile = 'state.json';
const journalFile = 'journal.jsonl';
const minJournalBytes = 4 * 1024 * 1024;

type SmallCollection = 'users' | 'tokens' | 'refreshTokens' | 'authCodes' | 'clients' | 'sessions';
const smallCollections: readonly SmallCollection[] = ['users', 'tokens', 'refreshTokens', 'authCodes', 'clients', 'sessions'];

interface Snapshot {
  readonly generation: number;
  readonly state: ServerState;
}

interface JournalLine {
  readonly g: number;
  readonly counters: Pick<ServerState, 'nextId' | 'nextVersionId' | 'nextUserId' | 'nextPosition'>;
  readonly items: Record<string, ItemRec | null>;
  readonly events: ServerState['events'];
  readonly small: Partial<Pick<ServerState, SmallCollection>>;
}

function writeAtomic(dir: string, name: string, text: string): void {
  const path = join(dir, name);
  const tmp = `${path}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  const dirFd = openSync(dir, 'r');
  try {
    fsyncSync(dirFd);
  } finally {
    closeSync(dirFd);
  }
}

export class Persistence {
  private generation = 0;
  private eventsWritten = 0;
  private readonly written = new Map<SmallCollection, string>();
  private snapshotBytes = 0;
  private journalBytes = 0;

  constructor(private readonly dir: string) {}

  /** The saved state with its journal replayed, or null when the directory holds none. */
  load(): ServerState | null {
    const path = join(this.dir, snapshotFile);
    if (!existsSync(path)) return null;
    let snap: Snapshot;
    try {
      snap = JSON.parse(readFileSync(path, 'utf8')) as Snapshot;
      if (!snap.state || typeof snap.generation !== 'number') throw new Error('no generation/state');
    } catch (e) {
      throw new Error(`box-server: ${path} is not valid JSON (${String(e)}); fix or move it away, nothing was changed`);
    }
    const state = snap.state;
    this.generation = snap.generation;
    const jpath = join(this.dir, journalFile);
    if (existsSync(jpath)) {
      for (const line of readFileSync(jpath, 'utf8').split('\n')) {
        let entry: JournalLine;
        try {
          entry = JSON.parse(line) as JournalLine;
        } catch {
          break; // the torn tail of a write cut short: everything before it was answered, nothing after it was
        }
        if (entry.g === this.generation) apply(state, entry);
      }
    }
    return state;
  }

  /** Write a full snapshot and start an empty journal. */
  snapshot(state: ServerState): void {
    this.generation += 1;
    const text = JSON.stringify({ generation: this.generation, state } satisfies Snapshot);
    writeAtomic(this.dir, snapshotFile, text);
    writeAtomic(this.dir, journalFile, '');
    this.snapshotBytes = text.length;
    this.journalBytes = 0;
    this.eventsWritten = state.events.length;
    for (const c of smallCollections) this.written.set(c, JSON.stringify(state[c]));
  }

  /** Append what changed; fold into a snapshot when the journal outgrows it. */
  append(state: ServerState, changedItemIds: ReadonlySet<string>): void {
    const items: Record<string, ItemRec | null> = {};
    for (const id of changedItemIds) items[id] = state.items[id] ?? null;
    const small: Partial<Record<SmallCollection, unknown>> = {};
    for (const c of smallCollections) {
      const text = JSON.stringify(state[c]);
      if (this.written.get(c) !== text) {
        small[c] = state[c];
        this.written.set(c, text);
      }
    }
    const { nextId, nextVersionId, nextUserId, nextPosition } = state;
    const line: JournalLine = {
      g: this.generation,
      counters: { nextId, nextVersionId, nextUserId, nextPosition },
      items,
      events: state.events.slice(this.eventsWritten),
      small: small as JournalLine['small'],
    };
    this.eventsWritten = state.events.length;
    const text = `${JSON.stringify(line)}\n`;
    const fd = openSync(join(this.dir, journalFile), 'a', 0o600);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    this.journalBytes += text.length;
    if (this.journalBytes > Math.max(minJournalBytes, this.snapshotBytes)) this.snapshot(state);
  }
}

function apply(state: ServerState, entry: JournalLine): void {
  Object.assign(state, entry.counters);
  for (const [id, rec] of Object.entries(entry.items)) {
    if (rec) state.items[id] = rec;
    else delete state.items[id];
  }
  const last = state.events[state.events.length - 1]?.position ?? 0;
  for (const ev of entry.events) if (ev.position > last) state.events.push(ev);
  Object.assign(state, entry.small);
}
