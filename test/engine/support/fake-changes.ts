/**
 * RemoteChanges over the in-memory FakeRemoteStore, for engine tests that do not need HTTP. Each position
 * remembers every item's sequence id and status at the time it was handed out; `fetch` hints every item that
 * changed since (new, edited, moved, trashed, restored). That is what the port promises: hints, not truth.
 * `invalidate()` makes every older position answer `stream_position_invalid`.
 */
import type { RemoteId } from '../../../src/core/model.js';
import type { ChangeBatch, RemoteChanges, RemoteHint, StreamType } from '../../../src/ports/remote-changes.js';
import { remoteError } from '../../../src/remote/box/error-codes.js';
import type { FakeRemoteStore } from '../../support/fake-remote-store.js';

type Seen = ReadonlyMap<RemoteId, string>;

export class FakeChanges implements RemoteChanges {
  private readonly positions: Seen[] = [];
  private validFrom = 0;
  /** Calls of `now` and `fetch`, in order (for asserting the cursor protocol). */
  readonly calls: { method: 'now' | 'fetch'; position?: string }[] = [];

  constructor(private readonly store: FakeRemoteStore) {}

  private take(): string {
    const seen = new Map<RemoteId, string>();
    for (const e of this.store.allEntries()) seen.set(e.id, `${e.sequenceId}:${e.status}`);
    this.positions.push(seen);
    return String(this.positions.length - 1);
  }

  invalidate(): void {
    this.validFrom = this.positions.length;
  }

  async now(_stream: StreamType): Promise<string> {
    this.calls.push({ method: 'now' });
    return this.take();
  }

  async fetch(_stream: StreamType, position: string): Promise<ChangeBatch> {
    this.calls.push({ method: 'fetch', position });
    const index = Number(position);
    const before = this.positions[index];
    if (!before || index < this.validFrom) throw remoteError('stream_position_invalid', `stream position ${position} is too old`);
    const hints: RemoteHint[] = [];
    for (const e of this.store.allEntries()) {
      if (before.get(e.id) === `${e.sequenceId}:${e.status}`) continue;
      hints.push({
        id: e.id,
        kind: e.kind,
        change: e.status === 'active' ? 'changed' : 'trashed',
        syncStateSet: false,
        parentId: e.parentId,
        sequenceId: e.sequenceId,
        etag: e.etag,
        name: e.name,
      });
    }
    return { hints, nextPosition: this.take() };
  }

  async waitForChange(): Promise<'changed' | 'timeout'> {
    return 'timeout';
  }
}
