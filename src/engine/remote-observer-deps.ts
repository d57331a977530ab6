/**
 * What the remote observer (observe-remote.ts) and its hint handling (remote-hints.ts) work with; its own file so
 * that observe-remote.ts, which applies the hints, and remote-hints.ts do not import each other.
 */
import type { Logger } from 'pino';
import type { SyncRoot } from '../core/model.js';
import type { Journal } from '../ports/journal.js';
import type { RemoteChanges, StreamType } from '../ports/remote-changes.js';
import type { RemoteStore } from '../ports/remote-store.js';

export interface RemoteObserverDeps {
  readonly journal: Journal;
  readonly remote: RemoteStore;
  readonly changes: RemoteChanges;
  readonly roots: readonly SyncRoot[];
  readonly streamType: StreamType;
  readonly logger: Logger;
}
