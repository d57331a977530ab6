/**
 * What `sync --once` shows: the progress figures (files and bytes done and left, rate, ETA) derived from the
 * engine's status reports, the operation lines, the one-line summary, and the bar on a real pseudo-terminal.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asRelPath, asRemoteId, asRootId } from '../../src/core/model.js';
import type { RootStatus, RunSummary, StatusReport } from '../../src/engine/types.js';
import { createRunReporter, currentText, formatOperationLine, formatSummary, ProgressTracker } from '../../src/cli/progress.js';
import { formatBytes } from '../../src/core/format.js';
import { cliEntry, repoRoot } from '../support/cli.js';
import { startSyncEnv, type SyncEnv } from './sync-harness.js';
import { capturedStreams } from '../support/captured-streams.js';

const root = asRootId('r1');

function report(r: Partial<RootStatus>): StatusReport {
  return {
    phase: 'transferring',
    roots: [
      {
        root,
        localPath: '/m',
        remoteId: asRemoteId('0'),
        inSync: { files: 0, folders: 0, bytes: 0 },
        queued: { ops: 0, bytes: 0 },
        inFlight: [],
        rateBytesPerSec: 0,
        etaSec: null,
        ...r,
      },
    ],
    conflicts: [],
    errors: [],
    heldGuard: null,
    lastSuccessfulSyncAtMs: null,
    fatal: null,
  };
}

const transfer = (path: string, doneBytes: number, totalBytes: number) => ({
  root,
  path: asRelPath(path),
  direction: 'down' as const,
  doneBytes,
  totalBytes,
  startedAtMs: 0,
});

const summary = (s: Partial<RunSummary>): RunSummary => ({
  outcome: 'converged',
  ops: {},
  uploadedBytes: 0,
  downloadedBytes: 0,
  failedItems: 0,
  parkedItems: 0,
  problems: [],
  conflicts: 0,
  passes: 1,
  windows: 0,
  durationMs: 1234,
  message: 'in sync: ...; 1 passes, 1.2 s',
  ...s,
});

describe('progress figures', () => {
  it('one big file: counted once, percentage by bytes, no ETA before there is a rate', () => {
    const t = new ProgressTracker();
    const MiB = 1024 * 1024;
    // The engine's queued figures include the running transfer (ops) and its remaining bytes.
    t.status(report({ queued: { ops: 1, bytes: 143 * MiB }, inFlight: [transfer('big.iso', 0, 143 * MiB)], rateBytesPerSec: 0 }));
    expect(t.figures()).toEqual({ filesDone: 0, filesTotal: 1, bytesDone: 0, bytesTotal: 143 * MiB, percent: 0, rateBytesPerSec: 0, etaSec: null, current: ['big.iso'] });
    t.status(report({ queued: { ops: 1, bytes: 87 * MiB }, inFlight: [transfer('big.iso', 56 * MiB, 143 * MiB)], rateBytesPerSec: 8 * MiB }));
    expect(t.figures()).toMatchObject({ filesDone: 0, filesTotal: 1, bytesDone: 56 * MiB, bytesTotal: 143 * MiB, percent: 39, etaSec: 11 });
    t.operationDone();
    t.status(report({ queued: { ops: 0, bytes: 0 }, inFlight: [], rateBytesPerSec: 8 * MiB }));
    expect(t.figures()).toMatchObject({ filesDone: 1, filesTotal: 1, bytesDone: 143 * MiB, bytesTotal: 143 * MiB, percent: 100, current: [] });
  });

  it('count done and left across reports, including transfers that finished between reports', () => {
    const t = new ProgressTracker();
    t.status(report({ queued: { ops: 4, bytes: 4000 }, inFlight: [transfer('a', 0, 1000)], rateBytesPerSec: 500 }));
    expect(t.figures()).toMatchObject({ filesDone: 0, filesTotal: 4, bytesDone: 0, bytesTotal: 4000, etaSec: 8, percent: 0 });

    t.status(report({ queued: { ops: 4, bytes: 3400 }, inFlight: [transfer('a', 600, 1000), transfer('b', 0, 1000)], rateBytesPerSec: 1000, etaSec: 3 }));
    expect(t.figures()).toMatchObject({ filesTotal: 4, bytesDone: 600, bytesTotal: 4000, etaSec: 3, percent: 15, current: ['a', 'b'] });

    t.operationDone(); // a finished
    t.status(report({ queued: { ops: 3, bytes: 2500 }, inFlight: [transfer('b', 500, 1000), transfer('c', 0, 1000)], rateBytesPerSec: 1000 }));
    expect(t.figures()).toMatchObject({ filesDone: 1, filesTotal: 4, bytesDone: 1500, bytesTotal: 4000 });
    t.finished(4000);
    expect(t.figures()).toMatchObject({ bytesDone: 4000, bytesTotal: 4000, percent: 100, etaSec: 0 });
  });

  it('metadata only: the percentage follows operations', () => {
    const t = new ProgressTracker();
    t.status(report({ queued: { ops: 4, bytes: 0 } }));
    t.operationDone();
    t.status(report({ queued: { ops: 3, bytes: 0 } }));
    expect(t.figures()).toMatchObject({ filesDone: 1, filesTotal: 4, percent: 25, etaSec: null });
  });

  it('names the file in flight, shortened from the left, and how many more', () => {
    expect(currentText([])).toBe('');
    expect(currentText(['a.txt', 'b.txt', 'c.txt'])).toBe('a.txt +2');
    const long = `${'deep/'.repeat(20)}name.bin`;
    const text = currentText([long], 30);
    expect(text.length).toBe(30);
    expect(text.endsWith('name.bin')).toBe(true);
    expect(text.startsWith('…')).toBe(true);
  });
});

describe('log lines on a TTY', () => {
  it('a log line is written above the bar, never into its line', () => {
    const err = new PassThrough();
    let e = '';
    err.on('data', (d: Buffer) => (e += d.toString()));
    const r = createRunReporter({ tty: true, out: new PassThrough(), err });
    r.onStatus(report({ queued: { ops: 1, bytes: 100 }, inFlight: [transfer('x', 10, 100)], rateBytesPerSec: 10 }));
    r.log('WARN something happened\n');
    r.onStatus(report({ queued: { ops: 1, bytes: 50 }, inFlight: [transfer('x', 50, 100)], rateBytesPerSec: 10 }));
    r.finish(summary({}));
    // The message has a line of its own: whatever came before it ends with a newline or a cleared line.
    const at = e.indexOf('WARN something happened\n');
    expect(at).toBeGreaterThanOrEqual(0);
    const before = e.slice(0, at);
    expect(before === '' || /(\n|\r|\x1b\[[0-9;]*[KGJ])$/.test(before)).toBe(true);
  });
});

describe('lines and summary', () => {
  it('an operation line names the kind, the path and the reason; a failure says so and why', () => {
    expect(formatOperationLine({ root, kind: 'download', path: asRelPath('Docs/a.txt'), reason: 'new file on Box', ok: true })).toMatch(
      /^download\s+Docs\/a\.txt {2}\(new file on Box\)$/,
    );
    expect(
      formatOperationLine({ root, kind: 'upload', path: asRelPath('b.txt'), reason: 'new file here', ok: false, error: 'Box answered 500; will retry in 30 s' }),
    ).toBe('FAILED upload               b.txt  (new file here): Box answered 500; will retry in 30 s');
  });

  it('the summary is one line with the outcome, counts, bytes and the reason when there is one', () => {
    expect(
      formatSummary(summary({ ops: { download: 2, 'write-weblink': 1, upload: 1, 'local-move': 1, link: 4 }, downloadedBytes: 2048, uploadedBytes: 10, conflicts: 1, passes: 3 })),
    ).toBe(
      'boxsync: converged in 1.2 s (3 passes): 3 downloaded (2.0 KiB), 1 uploaded (10 B), 1 moved locally, 4 linked without transfer, 1 conflict, 0 failed',
    );
    const guard = formatSummary(
      summary({ outcome: 'guard', message: 'stopped by a safety guard: 0 downloaded (0 B), 2 trashed; 1 passes, 0.1 s (a pass would trash 5 of 6 items)' }),
    );
    expect(guard).toMatch(/^boxsync: stopped by a safety guard \(the run took .* - a pass would trash 5 of 6 items$/);
    expect(guard.split('\n')).toHaveLength(1);
    expect(formatSummary(summary({ message: 'in sync: 1 downloaded (5 B); 1 passes, 0.0 s' }))).not.toContain(' - ');
  });

  it('a run that could not finish with no item failing says so, not "items failed"', () => {
    const line = formatSummary(summary({ outcome: 'failed-items', failedItems: 0, passes: 0, durationMs: 8800, message: 'x; 0 passes, 8.8 s (GET /2.0/events: network error ECONNRESET)' }));
    expect(line).toBe('boxsync: not in sync: the run could not finish; nothing is lost, the next run picks up from here (the run took 8.8 s, 0 passes): 0 downloaded (0 B), 0 uploaded (0 B), 0 conflicts, 0 failed - GET /2.0/events: network error ECONNRESET');
    expect(formatSummary(summary({ outcome: 'failed-items', failedItems: 2 }))).toMatch(/not in sync: some items failed or are parked/);
  });

  it('formats bytes in binary units', () => {
    expect([formatBytes(0), formatBytes(1023), formatBytes(1536), formatBytes(25 * 1024 * 1024), formatBytes(1024 ** 3)]).toEqual([
      '0 B',
      '1023 B',
      '1.5 KiB',
      '25 MiB',
      '1.0 GiB',
    ]);
  });

  it('without a TTY: one line per operation on stderr and the summary alone on stdout', () => {
    const c = capturedStreams();
    const r = createRunReporter(c.streams);
    r.onStatus(report({ queued: { ops: 1, bytes: 5 } }));
    r.onOperation({ root, kind: 'download', path: asRelPath('x'), reason: 'why', ok: true });
    r.finish(summary({ ops: { download: 1 }, downloadedBytes: 5 }));
    expect(c.err()).toMatch(/^download\s+x {2}\(why\)\n$/);
    expect(c.out()).toBe('boxsync: converged in 1.2 s (1 pass): 1 downloaded (5 B), 0 uploaded (0 B), 0 conflicts, 0 failed\n');
  });
});

describe('on a real TTY', () => {
  let env: SyncEnv & { remoteRootId: string };
  beforeAll(async () => {
    env = await startSyncEnv();
    for (let i = 0; i < 5; i++) env.web.uploadFile(env.remoteRootId, `t${i}.txt`, `tty ${i}\n`);
  });
  afterAll(async () => {
    await env.close();
  });

  it.skipIf(!existsSync('/usr/bin/script'))('draws the progress bar (ops, bytes, rate, ETA) and still ends with the summary', async () => {
    const cmd = [process.execPath, '--import', 'tsx', cliEntry, 'sync', '--once', '--config', env.configFile].map((a) => `'${a}'`).join(' ');
    const output = await new Promise<string>((resolve, reject) => {
      execFile('/usr/bin/script', ['-qec', cmd, '/dev/null'], { cwd: repoRoot, timeout: 60_000, env: { ...process.env, TERM: 'xterm', COLUMNS: '160' } }, (error, stdout) =>
        error ? reject(new Error(`${error.message}\n${stdout}`)) : resolve(stdout),
      );
    });
    expect(output).toMatch(/\d+% \| \d+\/\d+ ops \| [\d.]+ \S?B\/[\d.]+ \S?B \| [\d.]+ \S?B\/s \| ETA (--|\d)/);
    expect(output).toMatch(/100% \| 5\/5 ops \| 30 B\/30 B/);
    expect(output).toMatch(/boxsync: converged in .*: 5 downloaded \(30 B\)/);
    expect(output).not.toMatch(/^download\s+t0\.txt/m);
    for (let i = 0; i < 5; i++) expect(existsSync(join(env.mirror, `t${i}.txt`))).toBe(true);
  });
});
