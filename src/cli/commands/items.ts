/**
 * Box Drive from the shell: `boxsync info|share|unshare|lock|unlock|versions|restore-version|history`.
 * Each takes a local path inside a sync root (relative paths resolve from the current directory), prints a
 * readable answer or `--json`, and goes through the daemon's control socket when it runs, else works directly
 * under the state lock (src/daemon/control/item-client.ts).
 *
 * Exit codes: 0 ok; 1 failed (Box refused; the message says why); 2 fatal (config, journal, bad arguments, the
 * state dir held by a `sync --once`); 4 outside every sync root; 5 not synced (yet); 6 locked by another user;
 * 7 Box refused the credentials (run `boxsync login`); 8 the daemon holds the state dir but does not answer.
 */
import { resolve } from 'node:path';
import { escapeText } from '../../core/escape.js';
import { InvalidArgumentError, type Command } from 'commander';
import type { ItemRequest } from '../../daemon/control/item-protocol.js';

interface Common {
  json?: boolean;
  config?: string;
  socket?: string;
}

function common(cmd: Command): Command {
  return cmd
    .option('--json', 'print JSON instead of the readable answer')
    .option('-c, --config <file>', 'config file (default: $BOXSYNC_CONFIG, else $XDG_CONFIG_HOME/boxsync/config.json)')
    .option('--socket <path>', 'control socket of the daemon (default: the config socketPath)');
}

async function run(req: ItemRequest, opts: Common, extra: { direct?: boolean } = {}): Promise<void> {
  const { runItemCommand } = await import('../../daemon/control/item-client.js');
  process.exitCode = await runItemCommand(req, { json: opts.json === true, config: opts.config, socket: opts.socket, ...extra });
}

const abs = (p: string): string => resolve(process.cwd(), p);

/** `2026-12-31` (midnight, local time) or any date-time `Date` reads (`2026-12-31T18:00`, with a zone or not). */
export function parseDate(text: string): number {
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  let ms: number;
  if (day) {
    const [y, m, d] = [Number(day[1]), Number(day[2]), Number(day[3])];
    const date = new Date(y, m - 1, d);
    if (date.getFullYear() !== y || date.getMonth() !== m - 1 || date.getDate() !== d) throw new InvalidArgumentError(`${text} is not a date`);
    ms = date.getTime();
  } else {
    ms = Date.parse(text);
    if (!Number.isFinite(ms)) throw new InvalidArgumentError(`"${text}" is not a date; use YYYY-MM-DD (midnight) or YYYY-MM-DDTHH:MM`);
  }
  if (ms <= Date.now()) throw new InvalidArgumentError(`${text} is in the past`);
  return ms;
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `90s`, `30m`, `12h`, `7d`, `2w`. */
export function parseDuration(text: string): number {
  const m = /^(\d+)\s*([smhdw])$/.exec(text.trim());
  if (!m) throw new InvalidArgumentError(`"${text}" is not a duration; use e.g. 30m, 12h, 7d or 2w`);
  return Number(m[1]) * UNIT_MS[m[2]!]!;
}

export function register(program: Command): void {
  common(program.command('info').description('Show the Box side of a synced file or folder: id, etag, version, size, SHA-1, sync state, lock, shared link, web URL, last operation'))
    .argument('<path>', 'a file or folder inside a sync root')
    .action(async (path: string, opts: Common) => run({ command: 'info', path: abs(path) }, opts));

  common(program.command('share').description('Create or update the shared link of a synced file or folder and print its URL'))
    .argument('<path>', 'a file or folder inside a sync root')
    .option('--access <level>', 'open, company or collaborators')
    .option('--password <password>', 'protect the link (open links only; at least 8 characters)')
    .option('--expires <date>', 'end the link then (YYYY-MM-DD means midnight)', parseDate)
    .option('--no-download', 'viewers may preview but not download')
    .option('--direct', 'print the direct-download URL instead of the link (files only)')
    .action(async (path: string, opts: Common & { access?: string; password?: string; expires?: number; download?: boolean; direct?: boolean }) => {
      if (opts.access !== undefined && !['open', 'company', 'collaborators'].includes(opts.access)) {
        process.stderr.write(`boxsync: --access must be open, company or collaborators, not "${escapeText(opts.access)}"\n`);
        process.exitCode = 2;
        return;
      }
      await run(
        {
          command: 'share',
          path: abs(path),
          ...(opts.access === undefined ? {} : { access: opts.access as 'open' | 'company' | 'collaborators' }),
          ...(opts.password === undefined ? {} : { password: opts.password }),
          ...(opts.expires === undefined ? {} : { expiresAtMs: opts.expires }),
          ...(opts.download === false ? { noDownload: true } : {}),
        },
        opts,
        { direct: opts.direct === true },
      );
    });

  common(program.command('unshare').description('Remove the shared link of a synced file or folder'))
    .argument('<path>', 'a file or folder inside a sync root')
    .action(async (path: string, opts: Common) => run({ command: 'unshare', path: abs(path) }, opts));

  common(program.command('lock').description('Lock a synced file on Box so that others cannot change it'))
    .argument('<path>', 'a file inside a sync root')
    .option('--prevent-download', 'others cannot download it either')
    .option('--expires <date>', 'the lock ends by itself then (YYYY-MM-DD means midnight)', parseDate)
    .action(async (path: string, opts: Common & { preventDownload?: boolean; expires?: number }) =>
      run(
        {
          command: 'lock',
          path: abs(path),
          ...(opts.preventDownload ? { preventDownload: true } : {}),
          ...(opts.expires === undefined ? {} : { expiresAtMs: opts.expires }),
        },
        opts,
      ),
    );

  common(program.command('unlock').description('Remove your lock from a synced file'))
    .argument('<path>', 'a file inside a sync root')
    .action(async (path: string, opts: Common) => run({ command: 'unlock', path: abs(path) }, opts));

  common(program.command('versions').description('List the versions Box keeps of a synced file (id, size, modified time, who)'))
    .argument('<path>', 'a file inside a sync root')
    .action(async (path: string, opts: Common) => run({ command: 'versions', path: abs(path) }, opts));

  common(program.command('restore-version').description('Make an earlier version current on Box; sync then brings it down'))
    .argument('<path>', 'a file inside a sync root')
    .argument('<version-id>', 'the version id (`boxsync versions PATH` lists them)')
    .action(async (path: string, versionId: string, opts: Common) => run({ command: 'restore-version', path: abs(path), versionId }, opts));

  const conflicts = common(program.command('conflicts').description('List the conflict copies that exist now, with both sides\' times and sizes'))
    .argument('[path]', 'only under this folder')
    .action(async (path: string | undefined, opts: Common) => run({ command: 'conflicts', ...(path === undefined ? {} : { path: abs(path) }) }, opts));
  common(conflicts.command('resolve').description('Settle a conflict: keep your version (local), the Box version (remote), or both under two names'))
    .argument('<path>', 'the conflict copy, or the original when it has one copy')
    .requiredOption('--keep <side>', 'local, remote or both')
    .action(async (path: string, opts: Common & { keep: string }) => {
      if (!['local', 'remote', 'both'].includes(opts.keep)) {
        process.stderr.write(`boxsync: --keep must be local, remote or both, not "${escapeText(opts.keep)}"\n`);
        process.exitCode = 2;
        return;
      }
      // `--config`, `--socket` and `--json` may have been taken by `conflicts` itself (commander reads a parent's
      // options anywhere on the line).
      await run({ command: 'conflicts-resolve', path: abs(path), keep: opts.keep as 'local' | 'remote' | 'both' }, { ...conflicts.opts<Common>(), ...opts });
    });

  const trash = program.command('trash').description('What was deleted under the synced folders: the Box trash and boxsync\'s local trash');
  common(trash.command('list').description('List what was deleted under the synced folders (or under PATH), from the Box trash and the local trash'))
    .argument('[path]', 'only what was at or under this path')
    .action(async (path: string | undefined, opts: Common) => run({ command: 'trash-list', ...(path === undefined ? {} : { path: abs(path) }) }, opts));
  common(trash.command('restore').description('Bring one item back (a Box restore keeps its Box id); sync then brings it to the other side'))
    .argument('<path-or-id>', 'where it was, or an id from `boxsync trash list`')
    .option('--to <dir>', 'restore into this synced folder instead')
    .option('--name <name>', 'restore under this name (e.g. when the old one is taken)')
    .action(async (target: string, opts: Common & { to?: string; name?: string }) =>
      run(
        {
          command: 'trash-restore',
          target: /^(\d+|box:\d+|local:\d+-[0-9a-f]+|desktop:.+)$/.test(target) ? target : abs(target),
          ...(opts.to === undefined ? {} : { to: abs(opts.to) }),
          ...(opts.name === undefined ? {} : { name: opts.name }),
        },
        opts,
      ),
    );

  common(program.command('history').description('Recent operations and their reasons, from the journal (all roots, or one path and what is below it)'))
    .argument('[path]', 'a file or folder inside a sync root')
    .option('--since <duration>', 'only this recent (e.g. 30m, 12h, 7d)', parseDuration)
    .option('--limit <n>', 'at most this many (default 1000)', (v: string) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1 || n > 100_000) throw new InvalidArgumentError('a whole number from 1 to 100000');
      return n;
    })
    .action(async (path: string | undefined, opts: Common & { since?: number; limit?: number }) =>
      run(
        {
          command: 'history',
          ...(path === undefined ? {} : { path: abs(path) }),
          ...(opts.since === undefined ? {} : { sinceMs: Date.now() - opts.since }),
          ...(opts.limit === undefined ? {} : { limit: opts.limit }),
        },
        opts,
      ),
    );
}
