/**
 * Logging in every command follows one rule (issue 15): BOXSYNC_LOG_LEVEL, else -v/--verbose (debug), else the
 * config's log.level; and every JSON line names its component once.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
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
    expect(logLevelFor('info', { BOXSYNC_LOG_LEVEL: 'trace', BOXSYNC_VERBOSE: '1' })).toBe('trace');
    expect(logLevelFor('info', { BOXSYNC_VERBOSE: '1' })).toBe('debug');
    expect(logLevelFor('warn', {})).toBe('warn');
    expect(logLevelFor('warn', { BOXSYNC_LOG_LEVEL: 'loud' }, (m) => warnings.push(m))).toBe('warn');
    expect(warnings[0]).toMatch(/BOXSYNC_LOG_LEVEL=loud is not a log level/);
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
