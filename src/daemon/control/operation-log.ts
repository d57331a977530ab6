/**
 * The most recent operation per path, for `boxsync status PATH` ("the reason for its last operation").
 * Bounded: the oldest paths are forgotten first once `capacity` is reached.
 */
import type { RootId } from '../../core/model.js';
import type { PathStatus } from './control-protocol.js';

export type LoggedOperation = NonNullable<PathStatus['lastOperation']>;

export class OperationLog {
  private readonly byKey = new Map<string, LoggedOperation>();

  constructor(private readonly capacity = 10_000) {}

  record(root: RootId, path: string, op: LoggedOperation): void {
    const key = `${root}\u0000${path}`;
    this.byKey.delete(key);
    this.byKey.set(key, op);
    if (this.byKey.size > this.capacity) {
      const oldest = this.byKey.keys().next().value;
      if (oldest !== undefined) this.byKey.delete(oldest);
    }
  }

  get(root: RootId, path: string): LoggedOperation | null {
    return this.byKey.get(`${root}\u0000${path}`) ?? null;
  }
}
