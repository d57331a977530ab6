/** Since when an item fails (engine/failures.ts recordOpFailure), on a real journal: kept across retries, gone with the failure. */
import { afterEach, expect, it } from 'vitest';
import { SyncError } from '../../src/core/errors.js';
import { asRelPath, asRootId } from '../../src/core/model.js';
import { recordOpFailure } from '../../src/engine/failures.js';
import { tempJournal } from './support/journal.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

it('an item failing again keeps the time its failures began; once cleared, a new failure starts a new one', async () => {
  const j = await tempJournal();
  cleanups.push(j.cleanup);
  const root = asRootId('r');
  const path = asRelPath('a.txt');
  const timeout = new SyncError({ code: 'timeout', disposition: 'retry', message: 'Box did not answer' });
  const denied = new SyncError({ code: 'permission_denied', disposition: 'skip', message: 'no permission' });
  expect(recordOpFailure(j.journal, { root, path, error: timeout, nowMs: 1_000, random: 0.5 }).firstFailedAtMs).toBe(1_000);
  recordOpFailure(j.journal, { root, path, error: denied, nowMs: 50_000, random: 0.5 });
  expect(j.journal.getFailure(root, path)).toMatchObject({ attempts: 2, code: 'permission_denied', firstFailedAtMs: 1_000 });
  j.journal.clearFailure(root, path);
  recordOpFailure(j.journal, { root, path, error: timeout, nowMs: 90_000, random: 0.5 });
  expect(j.journal.getFailure(root, path)).toMatchObject({ attempts: 1, firstFailedAtMs: 90_000 });
});
