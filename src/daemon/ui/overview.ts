/**
 * The web page's one overall state, from the same DaemonStatus `boxsync status` prints, and with the same
 * reasons (status-text.ts attentionReasons): a page and a shell never disagree about what needs the user.
 *
 *   offline          the Box event stream is reconnecting (Box cannot be reached), with its note
 *   needs-attention  anything attentionReasons lists (fatal error, held guard, failing or parked items, ...)
 *   paused           the user paused syncing, or every folder pair on its own
 *   syncing          a pass runs, or work is queued or in flight
 *   up-to-date       none of the above
 */
import type { DaemonStatus } from '../control/control-protocol.js';
import { allPairsPaused, attentionReasons } from '../control/status-text.js';

export type OverallState = 'up-to-date' | 'syncing' | 'paused' | 'needs-attention' | 'offline';

export interface Overall {
  readonly state: OverallState;
  /** Why it is not up to date (sentences, unescaped: the page renders them as text). */
  readonly reasons: readonly string[];
}

export function overallState(s: DaemonStatus): Overall {
  const e = s.engine;
  if (s.remoteStream.state === 'reconnecting' && !e.fatal) {
    return { state: 'offline', reasons: [`Box cannot be reached: ${s.remoteStream.note ?? 'reconnecting'}`] };
  }
  const attention = attentionReasons(s);
  if (attention.length > 0) return { state: 'needs-attention', reasons: attention };
  if (e.phase === 'paused') return { state: 'paused', reasons: ['paused by the user: nothing new starts until Resume'] };
  if (allPairsPaused(s)) return { state: 'paused', reasons: ['every folder pair is paused by the user: nothing new starts until one is resumed'] };
  const queued = e.roots.reduce((n, r) => n + r.queued.ops + r.inFlight.length, 0);
  if (e.phase !== 'idle' || queued > 0) {
    return { state: 'syncing', reasons: [queued > 0 ? `${queued} operation${queued === 1 ? '' : 's'} to do` : `${e.phase}`] };
  }
  return { state: 'up-to-date', reasons: [] };
}
