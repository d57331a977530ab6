/**
 * Answers that contradict the request are not believed. An upload, folder create, move or restore answers with
 * the item as Box now holds it; when that item is not the one asked for, or sits in another folder or under
 * another name than was asked, the answer is wrong (a proxy, a bug) or the world moved (someone else moved the
 * item the same instant). Taken as is, the journal would record the item elsewhere and the engine would plan
 * from that: a file "moved out of the mirror" is moved to the local trash, unsynced edits with it.
 *
 * So such an answer is checked with a GET of the item before anything is committed. When the GET shows the item
 * as asked, its answer is used. When it stays inconsistent (or the item is gone), the operation fails with
 * `remote_answer_inconsistent`, disposition skip: the engine parks that one path with the reason, commits
 * nothing for it, and moves or trashes nothing local; the rest of the sync goes on, and the parked item is tried
 * again when it changes.
 */
import { SyncError } from '../../core/errors.js';
import { escapeText } from '../../core/escape.js';
import type { RemoteEntry, RemoteId, RemoteKind } from '../../core/model.js';
import type { Logger } from '../../logger.js';

export interface AskedFor {
  /** What was asked, for messages: e.g. `upload of "a.txt"`. */
  readonly what: string;
  readonly kind: RemoteKind;
  /** The item acted on (absent for a create: the answer names it). */
  readonly id?: RemoteId;
  readonly parentId?: RemoteId;
  readonly name?: string;
}

export const ANSWER_INCONSISTENT = 'remote_answer_inconsistent';

/** How `got` contradicts what was asked, in words; null when it does not. */
export function contradiction(asked: AskedFor, got: RemoteEntry): string | null {
  if (asked.id !== undefined && got.id !== asked.id) return `it names item ${escapeText(got.id)}, not ${escapeText(asked.id)}`;
  if (got.kind !== asked.kind) return `it is a ${got.kind}, not a ${asked.kind}`;
  if (asked.parentId !== undefined && got.parentId !== asked.parentId) {
    return `it puts the item in folder ${got.parentId === null ? '(none)' : escapeText(got.parentId)}, not ${escapeText(asked.parentId)}`;
  }
  if (asked.name !== undefined && got.name !== asked.name && got.name.normalize('NFC') !== asked.name.normalize('NFC')) {
    return `it names the item "${escapeText(got.name)}", not "${escapeText(asked.name)}"`;
  }
  return null;
}

/**
 * `got` when it matches what was asked; else the item as a fresh GET shows it, when that matches; else throws
 * `remote_answer_inconsistent` (skip). `read` must not answer from a cache of the suspicious answer.
 */
export async function checkedAnswer(
  asked: AskedFor,
  got: RemoteEntry,
  read: (id: RemoteId, kind: RemoteKind) => Promise<RemoteEntry | null>,
  logger: Logger,
): Promise<RemoteEntry> {
  const first = contradiction(asked, got);
  if (first === null) return got;
  const id = asked.id ?? got.id;
  const log = logger.child({ component: 'box-answer-check' });
  log.warn({ id, kind: asked.kind }, `Box's answer to the ${asked.what} contradicts the request (${first}); reading the item again`);
  const fresh = await read(id, asked.kind);
  const still = fresh === null ? 'it is not there' : contradiction(asked, fresh);
  if (still === null) {
    log.info({ id }, `a fresh read of item ${escapeText(id)} shows it as asked; using it`);
    return fresh!;
  }
  throw new SyncError({
    code: ANSWER_INCONSISTENT,
    disposition: 'skip',
    message:
      `Box's answer to the ${asked.what} contradicts the request (${first}), and a fresh read of item ${escapeText(id)} does not show it as asked either (${still}); ` +
      'nothing local was moved or trashed, and the item is parked until it changes',
    details: { remoteId: id, answeredParentId: got.parentId, answeredName: got.name },
  });
}
