/** Everything a request handler can reach: the model, auth, faults, and the test-control switches. */
import type { Auth } from './auth.js';
import type { BoxLimits } from './box-limits.js';
import type { Faults } from './faults.js';
import type { Store } from './store.js';
import type { RecordedRequest } from './types.js';

export interface ServerCore {
  readonly store: Store;
  readonly auth: Auth;
  readonly faults: Faults;
  /** Box's per-user rate limits, when enforced (`boxLimits`). */
  readonly boxLimits: BoxLimits | null;
  readonly longPollTimeoutMs: number;
  readonly chunkedPartSizeBytes: number;
  readonly sessionCommitWaitMs: number;
  readonly logRequests: boolean;
  chaos: { duplicate: boolean; reorder: boolean };
  commitAccepted: { remaining: number; retryAfterSec: number };
  readonly requestLog: RecordedRequest[];
  /** Whole-file hashes of upload sessions being committed, by session id (runtime only: a restart hashes again). */
  readonly sessionHashes: Map<string, Promise<string>>;
  /** Aborted on close, so pending long polls end at once. */
  readonly closing: AbortController;
}

export const requestLogCapacity = 2000;
