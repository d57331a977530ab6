/**
 * The pino root logger. One child per component: `logger.child({ component: 'box-client' })`.
 *
 * Secrets never reach a log line: the redact paths below censor tokens, secrets and shared-link passwords
 * wherever they appear in logged objects, and `redactUrl` strips access tokens from URLs before they are logged.
 * On a TTY the output is pretty-printed; otherwise it is JSON lines (journald keeps them).
 */
import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

export const REDACT_PATHS = [
  'token',
  'accessToken',
  'refreshToken',
  'access_token',
  'refresh_token',
  'developerToken',
  'clientSecret',
  'client_secret',
  'password',
  'authorization',
  'Authorization',
  'headers.authorization',
  'headers.Authorization',
  'headers.boxapi',
  'headers.BoxApi',
  '*.token',
  '*.accessToken',
  '*.refreshToken',
  '*.access_token',
  '*.refresh_token',
  '*.developerToken',
  '*.clientSecret',
  '*.client_secret',
  '*.password',
  '*.authorization',
  '*.Authorization',
  '*.headers.authorization',
  '*.headers.Authorization',
];

/** Remove credentials from a URL's query string (access_token, shared_link_password, code, ...). */
export function redactUrl(url: string): string {
  return url.replace(/([?&](?:access_token|refresh_token|shared_link_password|password|code|client_secret)=)[^&#]*/gi, '$1[REDACTED]');
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LogLevelInputs {
  /** Where BOXSYNC_LOG_LEVEL is read; default process.env. */
  readonly env?: NodeJS.ProcessEnv;
  /** The command was given `-v/--verbose`. */
  readonly verbose?: boolean;
  /** Told when BOXSYNC_LOG_LEVEL is not a level. */
  readonly warn?: (m: string) => void;
}

/**
 * The level a command logs at, the same rule everywhere (daemon, sync --once, demo): BOXSYNC_LOG_LEVEL when set
 * to a level, else `debug` with `-v/--verbose`, else the configured level.
 * An unknown BOXSYNC_LOG_LEVEL is ignored with a warning rather than crashing pino.
 */
export function logLevelFor(configured: LogLevel, inputs: LogLevelInputs = {}): LogLevel {
  const env = inputs.env ?? process.env;
  const fromEnv = env.BOXSYNC_LOG_LEVEL?.trim().toLowerCase();
  if (fromEnv) {
    if ((LOG_LEVELS as readonly string[]).includes(fromEnv)) return fromEnv as LogLevel;
    inputs.warn?.(`BOXSYNC_LOG_LEVEL=${env.BOXSYNC_LOG_LEVEL} is not a log level (${LOG_LEVELS.join(', ')}); ignored`);
  }
  if (inputs.verbose === true) return 'debug';
  return configured;
}

export interface LoggerSetup {
  readonly level?: string;
  /** Force pretty (true) or JSON (false); default: pretty on a TTY. */
  readonly pretty?: boolean;
  /** Write here instead of stdout (tests pass a stream to assert on log lines). */
  readonly destination?: NodeJS.WritableStream;
}

export function createLogger(setup: LoggerSetup = {}): Logger {
  const opts: LoggerOptions = {
    level: setup.level ?? logLevelFor('info'),
    redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
  };
  if (setup.destination) return pino(opts, setup.destination as pino.DestinationStream);
  const pretty = setup.pretty ?? Boolean(process.stdout.isTTY);
  if (pretty) {
    return pino({ ...opts, transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss' } } });
  }
  return pino(opts);
}

/** A logger that discards everything (library defaults, tests that do not look at logs). */
export const silentLogger: Logger = pino({ level: 'silent' });
