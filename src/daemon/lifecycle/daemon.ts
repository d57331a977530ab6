/**
 * `boxsync daemon`: the lifecycle. Load the config, take the state-dir lock (the same one `sync --once`
 * takes), open the control socket, start a session (compose + loops), then wait for signals:
 *
 * - SIGTERM / SIGINT: stop within `shutdownTimeoutMs`: transfers in flight finish, or at the bound are
 *   checkpointed by engine.close() (upload sessions keep their confirmed parts for the next start); then the
 *   journal closes, the lock is released, exit 0. systemd's TimeoutStopSec is set above that bound.
 * - SIGHUP: reload the config. An invalid file is reported and the running configuration kept; stateDir and
 *   socketPath changes need a restart (the lock and the socket belong to them); everything else is applied by
 *   swapping the session. The control verb `selective` (selective-command.ts) edits the selection and reloads
 *   through the same path, in turn with SIGHUPs.
 *
 * - A fatal error (a revoked login, an unusable journal, a root that is gone): syncing stops, the reason is
 *   logged and kept in the state dir (daemon-exit.json, read by `boxsync status`), and the process ends with
 *   exit code 1, so systemd shows the unit failed instead of a live daemon that does nothing.
 *
 * Exit codes (src/daemon/control/exit-codes.ts): 0 stopped by a signal; 1 fatal error; 2 could not start (lock,
 * socket, compose); 78 configuration missing or invalid (systemd does not restart it: RestartPreventExitStatus).
 */
import { configPath, loadConfig, type Config } from '../../config/index.js';
import { createLogger, logLevelFor } from '../../logger.js';
import { errorText } from '../../core/escape.js';
import type { ControlRequest } from '../control/control-protocol.js';
import { startControlServer, type ControlServer } from '../control/control-server.js';
import type { ComposeDaemonParts } from './daemon-parts.js';
import { daemonSettings, type DaemonSettings } from './daemon-settings.js';
import { DAEMON_EXIT } from '../control/exit-codes.js';
import { clearLastExit, recordLastExit } from '../control/last-exit.js';
import { acquireStateLock, type StateLock } from '../lock.js';
import { EventLoopWatch } from './event-loop-watch.js';
import { SelectiveCommand } from './selective-command.js';
import { DaemonSession } from './session.js';
import { startDaemonUi, type UiServer } from '../ui/start-ui.js';

export interface RunDaemonOptions {
  readonly configPath?: string | undefined;
  readonly compose: ComposeDaemonParts;
  /** `-v/--verbose`: log at debug level unless BOXSYNC_LOG_LEVEL says otherwise. */
  readonly verbose?: boolean;
  /** Called once the daemon answers on its socket (tests, demo). */
  readonly onReady?: (info: { socketPath: string; config: Config }) => void;
}

export async function runDaemon(opts: RunDaemonOptions): Promise<number> {
  let config: Config;
  try {
    config = await loadConfig({ path: opts.configPath });
  } catch (e) {
    process.stderr.write(`boxsync daemon: ${errorText(e)}\n`);
    return DAEMON_EXIT.config;
  }
  const rootLogger = createLogger({ level: logLevelFor(config.log.level, { verbose: opts.verbose === true, warn: (m) => void process.stderr.write(`boxsync daemon: ${m}\n`) }) });
  const log = rootLogger.child({ component: 'daemon' });
  let settings: DaemonSettings;
  try {
    settings = daemonSettings(config);
  } catch (e) {
    log.fatal(`cannot start: ${e instanceof Error ? e.message : String(e)}`);
    return DAEMON_EXIT.config;
  }

  let lock: StateLock;
  try {
    lock = acquireStateLock(config.stateDir, 'daemon');
  } catch (e) {
    log.fatal({ err: e }, `cannot start: ${e instanceof Error ? e.message : String(e)}`);
    return DAEMON_EXIT.cannotStart;
  }
  clearLastExit(config.stateDir);

  const startedAtMs = Date.now();
  const loop = new EventLoopWatch();
  let session: DaemonSession | null = null;
  let stopping = false;
  let control: ControlServer;
  // Set once the reload path below exists; a `selective` request runs in turn with SIGHUP reloads.
  let inTurn: <T>(work: () => Promise<T>) => Promise<T> = () => Promise.reject(new Error('the daemon is still starting; ask again in a moment'));
  let reloadNow: () => Promise<string | null> = async () => 'the daemon is still starting';
  const selective = new SelectiveCommand({
    session: () => session,
    loadConfig: () => loadConfig({ path: opts.configPath }),
    reload: () => reloadNow(),
    stopping: () => stopping,
    log,
  });
  let ui: UiServer | null = null;
  const handler = async (req: ControlRequest): Promise<unknown> => {
    if (req.verb === 'ui-login') {
      if (!ui) throw new Error('the web page is off (daemon.ui.enabled is false, or its port could not be opened: see the daemon log); nothing was changed');
      return { url: ui.loginUrl() };
    }
    if (!session) throw new Error('the daemon is still starting or reloading; ask again in a moment');
    if (req.verb === 'status') {
      await session.statusReady();
      // The session may have been swapped (a reload) meanwhile: the one running now answers.
      if (!session) throw new Error('the daemon is reloading; ask again in a moment');
      return session.status({ pid: process.pid, startedAtMs, stopping, eventLoop: loop.status() });
    }
    if (req.verb === 'selective') return inTurn(() => selective.run(req));
    return session.handle(req);
  };
  try {
    control = await startControlServer(config.socketPath, handler);
  } catch (e) {
    log.fatal({ err: e }, `cannot start: ${e instanceof Error ? e.message : String(e)}`);
    lock.release();
    return DAEMON_EXIT.cannotStart;
  }

  // A fatal error of the running session ends the process; set once the exit path below exists.
  let earlyFatal: string | null = null;
  let onFatal: (message: string) => void = (message) => void (earlyFatal ??= message);
  // Aborted by the stop (SIGTERM, SIGINT, a fatal error): a session still starting (the first, or one a reload
  // starts) stops its journal check at once instead of the stop waiting for it.
  const starting = new AbortController();
  const hooks = {
    startSignal: starting.signal,
    onFatal: (message: string): void => onFatal(message),
    onNotice: selective.onNotice,
    freeSpace: selective.freeSpace,
    onActivity: { status: (): void => ui?.statusChanged(), operation: (op: Parameters<UiServer['operation']>[0]): void => ui?.operation(op) },
  };
  // SIGTERM or SIGINT while the session starts (its journal check runs for seconds at a million rows, in a process
  // of its own): the start is stopped (the check's process killed), what did start is closed, exit 0 as after any
  // SIGTERM. Without these handlers node's default ended the process by the signal itself.
  const stopWhileStarting = (signal: NodeJS.Signals): void => {
    if (stopping) {
      lock.release();
      process.exit(DAEMON_EXIT.stopped);
    }
    stopping = true;
    log.info(`${signal} while starting: stopping`);
    starting.abort();
    setTimeout(() => {
      log.warn('stop bound passed while starting; exiting now, the next start resumes from the journal');
      lock.release();
      process.exit(DAEMON_EXIT.stopped);
    }, settings.shutdownTimeoutMs + 900).unref();
  };
  process.on('SIGTERM', stopWhileStarting);
  process.on('SIGINT', stopWhileStarting);
  const stoppedWhileStarting = async (): Promise<number> => {
    await session?.close(settings.shutdownTimeoutMs);
    await control.close();
    lock.release();
    log.info('boxsync daemon stopped (while starting)');
    // As after a stop below: nothing left running keeps the process past systemd's TimeoutStopSec.
    setTimeout(() => process.exit(), 2_000).unref();
    return DAEMON_EXIT.stopped;
  };
  // Kept until the running daemon's own handlers take over (below, in the same synchronous run).
  const startHandlersOff = (): void => {
    process.off('SIGTERM', stopWhileStarting);
    process.off('SIGINT', stopWhileStarting);
  };
  try {
    session = await DaemonSession.start(config, settings, opts.compose, rootLogger, hooks);
  } catch (e) {
    startHandlersOff();
    if (stopping) return stoppedWhileStarting();
    const message = e instanceof Error ? e.message : String(e);
    log.fatal({ err: e }, `cannot start syncing: ${message}`);
    recordLastExit(config.stateDir, { atMs: Date.now(), code: DAEMON_EXIT.cannotStart, reason: `could not start syncing: ${message}` });
    await control.close();
    lock.release();
    return DAEMON_EXIT.cannotStart;
  }
  ui = await startDaemonUi(settings.ui, { stateDir: config.stateDir, log: rootLogger.child({ component: 'ui' }), control: handler, roots: () => (session?.config ?? config).folders.map((f) => f.localPath) });
  if (stopping) {
    // The signal came after the journal check, while the rest started (not at an abortable point): all is closed.
    startHandlersOff();
    await ui?.close();
    return stoppedWhileStarting();
  }
  log.info({ socket: config.socketPath, roots: config.folders.map((f) => f.localPath), stream: settings.streamType, watcher: settings.watcher }, 'boxsync daemon started');
  opts.onReady?.({ socketPath: config.socketPath, config });

  return new Promise<number>((resolve) => {
    let reloading: Promise<void> = Promise.resolve();

    let exitCode: number = DAEMON_EXIT.stopped;
    onFatal = (message: string): void => {
      if (stopping) return;
      exitCode = DAEMON_EXIT.fatal;
      recordLastExit(config.stateDir, { atMs: Date.now(), code: DAEMON_EXIT.fatal, reason: message });
      log.fatal(`syncing stopped: ${message}. Exiting with code ${DAEMON_EXIT.fatal}; \`boxsync status\` keeps the reason. Fix the cause, then start the daemon again`);
      stop('fatal error');
    };

    const stop = (signal: NodeJS.Signals | 'fatal error'): void => {
      if (stopping) {
        log.warn(`${signal} again: exiting now; in-flight uploads resume from their last confirmed part on the next start`);
        lock.release();
        process.exit(exitCode);
      }
      stopping = true;
      starting.abort();
      log.info(`${signal}: stopping (transfers finish or checkpoint within ${settings.shutdownTimeoutMs / 1000} s)`);
      // Whatever the daemon is doing (a request that ignores its abort, a stuck file system call), the process
      // ends shortly after the bound: the journal is crash-safe, and the next start resumes from it.
      setTimeout(() => {
        log.warn('stop bound passed with work still running; exiting now, the next start resumes from the journal');
        lock.release();
        process.exit(exitCode);
      }, settings.shutdownTimeoutMs + 900).unref();
      void (async () => {
        await reloading;
        const result = (await session?.close(settings.shutdownTimeoutMs)) ?? 'clean';
        await ui?.close();
        await control.close();
        lock.release();
        log.info(result === 'checkpointed' ? 'boxsync daemon stopped (transfers checkpointed)' : 'boxsync daemon stopped');
        process.off('SIGTERM', onTerm);
        process.off('SIGINT', onInt);
        process.off('SIGHUP', onHup);
        // A transfer that ignored its abort must not keep the process past systemd's TimeoutStopSec.
        setTimeout(() => process.exit(), 2_000).unref();
        resolve(exitCode);
      })();
    };

    /** null when the new configuration runs, else why the running one was kept. */
    const reload = async (): Promise<string | null> => {
      let next: Config;
      try {
        next = await loadConfig({ path: opts.configPath });
      } catch (e) {
        log.error(`SIGHUP: ${e instanceof Error ? e.message : String(e)}; keeping the running configuration`);
        return e instanceof Error ? e.message : String(e);
      }
      const current = session?.config ?? config;
      if (next.stateDir !== current.stateDir || next.socketPath !== current.socketPath) {
        log.warn('SIGHUP: stateDir and socketPath changes take effect only after a restart; keeping the running configuration');
        return 'stateDir and socketPath changes need a restart';
      }
      let nextSettings: DaemonSettings;
      try {
        nextSettings = daemonSettings(next);
      } catch (e) {
        log.error(`SIGHUP: ${e instanceof Error ? e.message : String(e)}; keeping the running configuration`);
        return e instanceof Error ? e.message : String(e);
      }
      log.info(`SIGHUP: reloading ${configPath({ path: opts.configPath })}`);
      const old = session;
      session = null;
      // Transfers still running at the bound are checkpointed; the new session's first pass resumes them.
      await old?.close(settings.shutdownTimeoutMs);
      try {
        session = await DaemonSession.start(next, nextSettings, opts.compose, rootLogger, hooks);
        settings = nextSettings;
        log.info({ roots: next.folders.map((f) => f.localPath) }, 'configuration reloaded');
        return null;
      } catch (e) {
        log.error({ err: e }, `SIGHUP: the new configuration did not start (${e instanceof Error ? e.message : String(e)}); restarting the previous one`);
        session = await DaemonSession.start(current, settings, opts.compose, rootLogger, hooks);
        return `the new configuration did not start: ${e instanceof Error ? e.message : String(e)}`;
      }
    };
    inTurn = <T>(work: () => Promise<T>): Promise<T> => {
      if (stopping) return Promise.reject(new Error('the daemon is stopping; nothing changed'));
      const done = reloading.then(work);
      reloading = done.then(() => undefined, () => undefined);
      return done;
    };
    reloadNow = reload;

    const onTerm = (): void => stop('SIGTERM');
    const onInt = (): void => stop('SIGINT');
    const onHup = (): void => {
      if (stopping) return;
      reloading = reloading.then(async () => void (await reload())).catch((e: unknown) => {
        log.error({ err: e }, `SIGHUP: reloading failed and the previous configuration could not be restarted (${e instanceof Error ? e.message : String(e)}); stop and start the daemon`);
      });
    };
    startHandlersOff();
    process.on('SIGTERM', onTerm);
    process.on('SIGINT', onInt);
    process.on('SIGHUP', onHup);
    if (earlyFatal !== null) onFatal(earlyFatal);
  });
}

