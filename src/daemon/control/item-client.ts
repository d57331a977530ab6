/**
 * The CLI side of the item commands: through the daemon's control socket when a daemon answers there, else
 * directly (the state lock, the journal, the Box client) with the same ItemCommands the daemon runs. Returns
 * the exit code (item-protocol.ts): 0 ok, 1 failed, 2 fatal, 4 outside every root, 5 not synced, 6 locked by
 * another user, 7 credentials refused, 8 the daemon holds the state dir but does not answer.
 */
import type { Config } from '../../config/index.js';
import { errorText, safeText, terminalSafeJson } from '../../core/escape.js';
import { ControlRequestError, DaemonNotRunningError, sendControl } from './control-client.js';
import type { ItemResult } from './items/item-commands.js';
import { EXIT_CODE_OF, ItemCommandError, isItemErrorKind, type ItemRequest } from './item-protocol.js';
import { formatItemResult } from './item-text.js';

export interface ItemClientOptions {
  readonly config?: string | undefined;
  readonly socket?: string | undefined;
  readonly json: boolean;
  /** `share --direct`: print the direct-download URL instead of the link. */
  readonly direct?: boolean;
  readonly out?: NodeJS.WritableStream;
  readonly err?: NodeJS.WritableStream;
  readonly env?: NodeJS.ProcessEnv;
}

export async function runItemCommand(req: ItemRequest, opts: ItemClientOptions): Promise<number> {
  const out = opts.out ?? process.stdout;
  const err = opts.err ?? process.stderr;
  const env = opts.env ?? process.env;
  const fail = (kind: keyof typeof EXIT_CODE_OF, message: string): number => {
    err.write(`boxsync: ${message}\n`);
    return EXIT_CODE_OF[kind];
  };
  const { loadConfig } = await import('../../config/index.js');
  let config: Config;
  try {
    config = await loadConfig({ path: opts.config, env });
  } catch (e) {
    return fail('fatal', errorText(e));
  }
  let result: ItemResult;
  try {
    result = await viaDaemon(opts.socket ?? config.socketPath, req).catch(async (e: unknown) => {
      if (e instanceof DaemonNotRunningError) return direct(config, req, env, err);
      throw e;
    });
  } catch (e) {
    if (e instanceof ItemCommandError) return fail(e.kind, e.message);
    if (e instanceof ControlRequestError) return fail(isItemErrorKind(e.code) ? e.code : 'failed', e.message);
    return fail('failed', safeText(e instanceof Error ? e.message : String(e)));
  }
  if (req.command === 'share' && opts.direct) {
    const r = result as Extract<ItemResult, { link: unknown }>;
    if (r.link.downloadUrl === null) {
      return fail('failed', `Box gives no direct-download URL for ${safeText(r.path)} (folders have none; the shared link is ${r.link.url})`);
    }
    result = { ...r, printed: r.link.downloadUrl };
  }
  out.write(opts.json ? `${terminalSafeJson(JSON.stringify(result, null, 2))}\n` : formatItemResult(req.command, result));
  return 0;
}

function viaDaemon(socketPath: string, req: ItemRequest): Promise<ItemResult> {
  // Box calls behind it (a version listing, a shared link) can take a while on a slow link.
  return sendControl<ItemResult>(socketPath, { verb: 'item', request: req }, 120_000);
}

async function direct(config: Config, req: ItemRequest, env: NodeJS.ProcessEnv, err: NodeJS.WritableStream): Promise<ItemResult> {
  const { acquireStateLock, StateLockedError } = await import('../lock.js');
  let lock: ReturnType<typeof acquireStateLock>;
  try {
    lock = acquireStateLock(config.stateDir, 'command');
  } catch (e) {
    if (e instanceof StateLockedError && e.holder.purpose === 'daemon') {
      throw new ItemCommandError(
        'daemon-missing',
        `the boxsync daemon (pid ${e.holder.pid}) holds ${config.stateDir} but does not answer on ${config.socketPath}; it may still be starting, hung, or use another socketPath (--socket). Nothing was changed`,
      );
    }
    throw new ItemCommandError('fatal', e instanceof Error ? e.message : String(e));
  }
  const { createLogger } = await import('../../logger.js');
  const logger = createLogger({ level: env.BOXSYNC_LOG_LEVEL || 'warn', destination: err });
  let composition: Awaited<ReturnType<typeof import('../compose.js').compose>> | undefined;
  try {
    const { compose } = await import('../compose.js');
    composition = await compose({ config, logger });
    const { ItemCommands } = await import('./items/item-commands.js');
    const items = new ItemCommands({
      roots: composition.roots,
      journal: composition.journal,
      remote: composition.remote,
      actions: composition.boxActions,
      apiUrl: config.remote.apiUrl,
      isIgnoredFor: (root) => composition!.isIgnoredFor(root),
      localFsFor: (root) => composition!.localFsFor(root),
      trashPlaces: composition.trashPlaces,
    });
    return await items.run(req);
  } finally {
    await composition?.close().catch(() => undefined);
    lock.release();
  }
}
