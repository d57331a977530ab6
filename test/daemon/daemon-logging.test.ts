/**
 * Logging in every command follows one rule (issue 15): BOXSYNC_LOG_LEVEL, else -v/--verbose (debug), else the
 * config's log.level; and every JSON line names its component once.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { runSyncOnce } from '../../src/cli/commands/sync.js';
import { logLevelFor } from '../../src/logger.js';
import { runCli } from '../support/cli.js';
import { waitFor } from '../support/wait.js';
import { createHarness, type Harness } from './daemon-harness.js';

const jsonLines = (out: string): string[] => out.split('\n').filter((l) => l.startsWith('{'));

describe('log levels and components', () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it('logLevelFor: the variable, then --verbose, then the config; an unknown level is ignored with a warning', () => {
    const warnings: string[] = [];
    expect(logLevelFor('info', { env: { BOXSYNC_LOG_LEVEL: 'trace' }, verbose: true })).toBe('trace');
    expect(logLevelFor('info', { env: {}, verbose: true })).toBe('debug');
    expect(logLevelFor('warn', { env: {} })).toBe('warn');
    expect(logLevelFor('warn', { env: { BOXSYNC_LOG_LEVEL: 'loud' }, verbose: true, warn: (m) => warnings.push(m) })).toBe('debug');
    expect(warnings[0]).toMatch(/BOXSYNC_LOG_LEVEL=loud is not a log level/);
    // -v is an option of the command, not something left in the environment for whoever reads it.
    expect(logLevelFor('warn', { env: { BOXSYNC_VERBOSE: '1' } })).toBe('warn');
  });

  it('runSyncOnce logs debug lines when it is told verbose, with nothing in the environment', async () => {
    h = await createHarness();
    const run = async (verbose: boolean): Promise<string> => {
      const err = new PassThrough();
      let text = '';
      err.on('data', (d: Buffer) => (text += d.toString()));
      const code = await runSyncOnce({ configPath: h!.configFile, env: {}, out: new PassThrough(), err, tty: false, verbose });
      expect(code, text).toBe(0);
      return text;
    };
    expect(jsonLines(await run(false)).filter((l) => l.includes('"level":20'))).toEqual([]);
    expect(jsonLines(await run(true)).some((l) => l.includes('"level":20'))).toBe(true);
  });

  it('the daemon honours BOXSYNC_LOG_LEVEL, and each line has one component key', async () => {
    h = await createHarness();
    const run = await h.start({ BOXSYNC_LOG_LEVEL: 'debug' });
    await writeFile(join(h.mirror, 'logged.txt'), 'x');
    await waitFor(() => h!.web.findByPath('Mirror/logged.txt'), { timeoutMs: 30_000, what: 'the upload' });
    const lines = jsonLines(run.output());
    expect(lines.some((l) => l.includes('"level":20'))).toBe(true);
    const repeated = lines.filter((l) => (l.match(/"component":/g) ?? []).length > 1);
    expect(repeated).toEqual([]);
    expect(lines.filter((l) => l.includes('"component":"box-http"')).length + lines.filter((l) => l.includes('"component":"engine"')).length).toBeGreaterThan(0);
    // Idle after its passes, the daemon hands unused heap back (idle-reclaim.ts), and says so at debug.
    const reclaimed = await waitFor(() => jsonLines(run.output()).find((l) => l.includes('idle: unused heap returned')), { timeoutMs: 30_000, what: 'the idle collection' });
    const r = JSON.parse(reclaimed) as { heapBeforeBytes: number; heapAfterBytes: number; liveBytes: number };
    // Sizes in bytes, as V8 reports them (a small heap may commit a little more after a collection than before).
    expect(r.liveBytes).toBeGreaterThan(0);
    expect(r.heapBeforeBytes).toBeGreaterThanOrEqual(r.liveBytes);
  });

  it('daemon -v logs debug lines; BOXSYNC_LOG_LEVEL still wins over it', async () => {
    h = await createHarness();
    const verbose = await h.start({ BOXSYNC_LOG_LEVEL: '' }, ['-v']);
    expect(jsonLines(verbose.output()).some((l) => l.includes('"level":20'))).toBe(true);
    await h.stop(verbose);
    const quiet = await h.start({ BOXSYNC_LOG_LEVEL: 'warn' }, ['-v']);
    await writeFile(join(h.mirror, 'quiet.txt'), 'x');
    await waitFor(() => h!.web.findByPath('Mirror/quiet.txt'), { timeoutMs: 30_000, what: 'the upload' });
    expect(jsonLines(quiet.output()).filter((l) => l.includes('"level":20') || l.includes('"level":30'))).toEqual([]);
  });

  it('sync --once -v logs debug lines (the default shows warnings only)', async () => {
    h = await createHarness();
    const quiet = await runCli(['sync', '--once', '--config', h.configFile]);
    expect(quiet.code).toBe(0);
    expect(jsonLines(quiet.stderr).filter((l) => l.includes('"level":20'))).toEqual([]);
    await writeFile(join(h.mirror, 'v.txt'), 'x');
    const verbose = await runCli(['sync', '--once', '-v', '--config', h.configFile]);
    expect(verbose.code).toBe(0);
    expect(jsonLines(verbose.stderr).some((l) => l.includes('"level":20'))).toBe(true);
  });
});
