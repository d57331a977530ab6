/**
 * `boxsync demo [--dir DIR] [--keep]`: the README's main command, on the embedded default.
 *
 * 1. starts box-server in this process with sample content (persisted under DIR/box-server);
 * 2. writes DIR/config.json (mode 0600) pointing at it with a developer token, the mirror at DIR/Box and the
 *    state at DIR/state;
 * 3. round 1: syncs the sample content down (`sync --once`, in process, same engine);
 * 4. round 2: makes one change on the "web" and one on disk, and syncs again, so both directions are shown;
 * 5. prints what happened and where everything is; with --keep, box-server keeps running until Ctrl-C so
 *    `boxsync sync --once --config DIR/config.json` can be tried by hand.
 *
 * Exit code: that of the last sync (0 when both rounds converged). The sync step is a parameter
 * (`DemoSyncStep`), so the daemon can replace `sync --once` with a live daemon run without touching the rest.
 */
import { access, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { isVerbose } from '../global-options.js';
import { setUpDemo } from './demo-setup.js';
import type { ExitCode } from './sync.js';

export interface DemoSyncContext {
  readonly configFile: string;
  readonly round: number;
  readonly out: NodeJS.WritableStream;
  readonly err: NodeJS.WritableStream;
  /** `-v/--verbose` was given to `boxsync demo`. */
  readonly verbose: boolean;
}

/** One sync of the demo: converge the mirror with box-server and return the exit code. */
export type DemoSyncStep = (ctx: DemoSyncContext) => Promise<ExitCode>;

export const syncOnceStep: DemoSyncStep = async ({ configFile, out, err, verbose }) => {
  const { runSyncOnce } = await import('./sync.js');
  return runSyncOnce({ configPath: configFile, out, err, verbose });
};

export interface DemoOptions {
  readonly dir?: string | undefined;
  readonly keep?: boolean;
  readonly out?: NodeJS.WritableStream;
  readonly err?: NodeJS.WritableStream;
  readonly syncStep?: DemoSyncStep;
  /** Resolves when a kept server should stop (default: SIGINT or SIGTERM). */
  readonly keepUntil?: Promise<void>;
  /** `-v/--verbose`: the syncs log at debug level. */
  readonly verbose?: boolean;
}

export function register(program: Command): void {
  program
    .command('demo')
    .description('Run the main job on the embedded default: box-server with sample content, synced into a local folder')
    .option('--dir <dir>', 'where to put the mirror, config and state (default: a new temp folder)')
    .option('--keep', 'keep box-server running after the sync (until Ctrl-C), to try `boxsync sync --once` by hand')
    .action(async (opts: { dir?: string; keep?: boolean }, cmd: Command) => {
      process.exitCode = await runDemo({ dir: opts.dir, keep: opts.keep ?? false, verbose: isVerbose(cmd) });
    });
}

export async function runDemo(opts: DemoOptions = {}): Promise<ExitCode> {
  const out = opts.out ?? process.stdout;
  const err = opts.err ?? process.stderr;
  const step = opts.syncStep ?? syncOnceStep;
  const verbose = opts.verbose === true;
  const say = (line = ''): void => void out.write(`${line}\n`);

  const { dir, mirror, configFile, server } = await setUpDemo({ dir: opts.dir, tempPrefix: 'boxsync-demo-' });
  try {
    say(`box-server with sample content: ${server.baseUrl}`);
    say(`config:                         ${configFile}`);
    say(`mirror:                         ${mirror}`);
    say();
    say('Round 1: sync the sample content down (boxsync sync --once)');
    const first = await step({ configFile, round: 1, out, err, verbose });
    if (first !== 0) {
      say(`Round 1 did not converge (exit code ${first}); see the messages above. The demo folder is kept: ${dir}`);
      return first;
    }
    say();
    for (const line of await treeLines(mirror)) say(`  ${line}`);
    say();

    say('Round 2: a change on the web and a change on this machine, then sync --once again');
    const web = server.control.as('1');
    web.uploadFile('0', 'From the web.txt', `Written on box-server at ${new Date().toISOString()}\n`);
    await writeFile(join(mirror, 'From this machine.txt'), `Written locally at ${new Date().toISOString()}\n`);
    const second = await step({ configFile, round: 2, out, err, verbose });
    const downloaded = await access(join(mirror, 'From the web.txt')).then(
      () => true,
      () => false,
    );
    const uploaded = web.findByPath('/From this machine.txt') !== null;
    say(`  web -> disk:  "From the web.txt" ${downloaded ? 'is now in the mirror' : 'did NOT arrive'}`);
    say(`  disk -> web:  "From this machine.txt" ${uploaded ? 'is now on box-server' : 'did NOT arrive'}`);
    say();
    say(`The mirror is at ${mirror}`);
    say(`Run it yourself: boxsync sync --once --config ${configFile}`);
    if (second !== 0 || !downloaded || !uploaded) return second !== 0 ? second : 1;

    if (opts.keep) {
      say(`box-server keeps running at ${server.baseUrl}; press Ctrl-C to stop it.`);
      await (opts.keepUntil ?? untilSignal());
    } else {
      say('(box-server stopped; its data is kept under box-server/ in the demo folder. Use --keep to leave it running.)');
    }
    return 0;
  } finally {
    await server.close();
  }
}

function untilSignal(): Promise<void> {
  return new Promise((resolveWait) => {
    const done = (): void => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolveWait();
    };
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
}

/** A short indented listing of the mirror (folders first), capped so a big tree does not flood the terminal. */
async function treeLines(root: string, max = 40): Promise<string[]> {
  const lines: string[] = [];
  const walk = async (dir: string, depth: number): Promise<void> => {
    const entries = (await readdir(dir, { withFileTypes: true })).sort(
      (a, b) => Number(b.isDirectory()) - Number(a.isDirectory()) || a.name.localeCompare(b.name),
    );
    for (const e of entries) {
      if (lines.length >= max) return;
      lines.push(`${'  '.repeat(depth)}${e.name}${e.isDirectory() ? '/' : ''}`);
      if (e.isDirectory()) await walk(join(dir, e.name), depth + 1);
    }
  };
  await walk(root, 0);
  if (lines.length >= max) lines.push('...');
  return lines;
}
