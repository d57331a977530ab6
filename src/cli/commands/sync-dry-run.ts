/**
 * `boxsync sync --once --dry-run` (`-n`): print the plan of the next run (every operation and its reason, pass
 * by pass, and what the safety guards would do) and change nothing: not on Box, not on disk, not in the journal.
 *
 * It takes the state lock like a real run (so the plan is not raced by another run or the daemon), copies the
 * journal to a private temp folder and runs the real engine over the copy with a recording executor
 * (src/engine/dry-run.ts): the printed plan is the recorder's records. The real journal, its event cursor and every file stay as they were.
 *
 * Exit codes: 0 the plan was printed (empty or not); 2 fatal (config, lock held, auth, journal);
 * 3 a safety guard would stop the real run (the plan up to the guard is printed).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { escapeText, safeText, terminalSafeJson } from '../../core/escape.js';
import type { DryRunReport } from '../../engine/dry-run.js';
import { configAndLock, lockTaken, type ExitCode } from './config-and-lock.js';

export interface DryRunOptions {
  readonly configPath?: string | undefined;
  readonly fullRescan?: boolean;
  readonly json?: boolean;
  readonly env?: NodeJS.ProcessEnv;
  readonly out?: NodeJS.WritableStream;
  readonly err?: NodeJS.WritableStream;
  readonly signal?: AbortSignal;
}

export async function runSyncDryRun(opts: DryRunOptions = {}): Promise<ExitCode> {
  const env = opts.env ?? process.env;
  const out = opts.out ?? process.stdout;
  const err = opts.err ?? process.stderr;
  const say = (line: string): void => void err.write(`boxsync: ${safeText(line, 4000)}\n`);

  const { isSyncError } = await import('../../core/errors.js');
  const opened = lockTaken(await configAndLock(opts.configPath, env, say, (pid, stateDir) =>
    // Its Box session is the daemon's own (a second process must not refresh the same single-use OAuth token).
    `the daemon (pid ${pid}) is syncing ${stateDir}: it runs each change as it comes, so there is no "next run" to plan. \`boxsync status\` shows what it is doing; stop it (\`boxsync pause\` holds transfers) to see a dry-run plan. Nothing was changed.`,
  ));
  if (opened === null) return 2;
  const { config, lock } = opened;
  const { createLogger } = await import('../../logger.js');
  const logger = createLogger({ level: env.BOXSYNC_LOG_LEVEL || (config.log.level === 'info' ? 'warn' : config.log.level), destination: err });
  const scratch = await mkdtemp(join(tmpdir(), 'boxsync-dry-run-'));
  let composition: Awaited<ReturnType<typeof import('../../daemon/compose.js').compose>> | undefined;
  try {
    const { copyJournal } = await import('../../journal/index.js');
    const journalFile = join(scratch, 'journal.db');
    await copyJournal(join(config.stateDir, 'journal.db'), journalFile);
    const { compose } = await import('../../daemon/compose.js');
    composition = await compose({ config, logger, journalFile, readOnlyStateDir: true });
    const report = await composition.planDryRun({ fullRescan: opts.fullRescan ?? false, ...(opts.signal ? { signal: opts.signal } : {}) });
    out.write(opts.json ? `${terminalSafeJson(JSON.stringify(report, null, 2))}\n` : formatDryRun(report));
    return report.guarded ? 3 : 0;
  } catch (e) {
    if (opts.signal?.aborted) {
      say('interrupted; nothing was changed.');
      return 1;
    }
    if (isSyncError(e)) {
      say(`${e.message} (dry run: nothing was changed)`);
      return e.disposition === 'fatal' ? 2 : 1;
    }
    logger.error({ err: e }, 'unexpected error');
    say(`unexpected error: ${e instanceof Error ? e.message : String(e)}. Nothing was changed.`);
    return 2;
  } finally {
    await composition?.close().catch((e: unknown) => logger.error({ err: e }, 'error while closing'));
    await rm(scratch, { recursive: true, force: true });
    lock.release();
  }
}

export function formatDryRun(report: DryRunReport): string {
  const lines: string[] = ['dry run: nothing was changed on Box, on disk or in the journal.'];
  for (const r of report.roots) {
    lines.push('');
    lines.push(`${escapeText(r.localPath)} <-> Box folder ${escapeText(r.remoteId)}: ${count(r.ops.length, 'operation')}`);
    let pass = 0;
    for (const op of r.ops) {
      if (op.pass !== pass) {
        pass = op.pass;
        lines.push(`  pass ${pass}:`);
      }
      const path = op.from === null ? escapeText(op.path) : `${escapeText(op.from)} -> ${escapeText(op.path)}`;
      lines.push(`    ${op.kind.padEnd(20)} ${path}  (${escapeText(op.reason)})`);
    }
    for (const rep of r.reports) lines.push(`  not synced: ${escapeText(rep.path)}  (${escapeText(rep.reason)}; skipped until it changes)`);
    if (r.deferred > 0) lines.push(`  waiting for a retry: ${count(r.deferred, 'item')} (left alone by this run; \`boxsync status\` lists them)`);
    for (const n of r.notes) lines.push(`  note: ${escapeText(n)}`);
    lines.push(r.guard === null ? '  safety guards: would not stop this run' : `  safety guard WOULD STOP this root (${escapeText(r.guard.id)}): ${safeText(r.guard.message)}`);
  }
  lines.push('');
  const guarded = report.roots.filter((r) => r.guard !== null).length;
  lines.push(
    `plan: ${count(report.total, 'operation')} over ${count(report.roots.length, 'root')}` +
      (guarded > 0 ? `; a safety guard would stop ${count(guarded, 'root')} (sync --once would exit 3)` : '; no safety guard would stop it'),
  );
  return `${lines.join('\n')}\n`;
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
