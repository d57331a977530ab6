import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openJournal } from '../../src/journal/index.js';
import { silentLogger } from '../../src/logger.js';
import type { Journal } from '../../src/ports/journal.js';
import type { UploadSessionRecord } from '../../src/ports/remote-store.js';
import { cleanExpiredUploadSessions, maintainJournal } from '../../src/daemon/lifecycle/maintenance-jobs.js';
import { DEFAULT_DAEMON_SCHEDULES, Schedules, type ScheduleJobs } from '../../src/daemon/lifecycle/schedules.js';
import { makeTempDir } from '../support/tmp.js';
import { waitFor } from '../support/wait.js';

function session(key: string, expiresAtMs: number): UploadSessionRecord {
  return {
    key,
    sessionId: `S-${key}`,
    endpoints: { upload_part: `http://x/${key}` },
    partSizeBytes: 8_388_608,
    totalParts: 3,
    fileSizeBytes: 20_000_000,
    sourceSha1: null,
    sourceMtimeMs: 1,
    expiresAtMs,
    fileId: null,
    parts: [],
  };
}

describe('daemon schedules', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let journal: Journal;
  let schedules: Schedules | null = null;

  beforeEach(async () => {
    ({ dir, cleanup } = await makeTempDir('boxsync-sched-'));
    journal = openJournal(join(dir, 'journal.db')).journal;
  });
  afterEach(async () => {
    await schedules?.stop();
    schedules = null;
    journal.close();
    await cleanup();
  });

  it('runs each job on its cron, records the last run, and keeps going after a failing job', async () => {
    const runs: string[] = [];
    const jobs: ScheduleJobs = {
      fullRescan: async () => (runs.push('fullRescan'), 'ok'),
      journalMaintenance: async () => maintainJournal(journal),
      tokenRefresh: async () => {
        throw new Error('Box said invalid_grant');
      },
      uploadSessionCleanup: async () => cleanExpiredUploadSessions(journal),
      localTrashPurge: async () => 'nothing',
    };
    const everySecond = Object.fromEntries(Object.keys(DEFAULT_DAEMON_SCHEDULES).map((k) => [k, '* * * * * *'])) as typeof DEFAULT_DAEMON_SCHEDULES;
    schedules = new Schedules(everySecond, jobs, silentLogger);
    schedules.start();
    const status = await waitFor(() => {
      const s = schedules!.status();
      return s.every((e) => e.lastRunAtMs !== null) ? s : null;
    }, { timeoutMs: 5_000, what: 'every job to run once' });
    expect(runs.length).toBeGreaterThanOrEqual(1);
    expect(status.find((s) => s.name === 'tokenRefresh')!.lastError).toBe('Box said invalid_grant');
    expect(status.find((s) => s.name === 'journalMaintenance')!.lastError).toBeNull();
    await waitFor(() => runs.length >= 2, { timeoutMs: 5_000, what: 'fullRescan to run again after the failing job' });
  });

  it('drops only expired upload sessions', () => {
    const now = Date.now();
    journal.uploadSessions.put(session('old', now - 1));
    journal.uploadSessions.put(session('live', now + 86_400_000));
    expect(cleanExpiredUploadSessions(journal, now)).toBe('dropped 1 expired upload session(s)');
    expect(journal.uploadSessions.list().map((s) => s.key)).toEqual(['live']);
  });

  it('has sensible defaults that node-cron accepts', async () => {
    const { validate } = await import('node-cron');
    for (const cron of Object.values(DEFAULT_DAEMON_SCHEDULES)) expect(validate(cron)).toBe(true);
  });
});
