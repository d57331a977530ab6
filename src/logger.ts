/**
 * The pino root logger. One child per component: `logger.child({ component: 'box-client' })`.
 *
 * Secrets never reach a log line: the redact paths below censor tokens, secrets and shared-link passwords
 * wherever they appear in logged objects, and `redactUrl` strips access tokens from URLs before they are logged.
 * On a TTY the output is pretty-printed; otherwise it is JSON lines (journald keeps them).
 */
import { pino, type Logger, type LoggerOptions } from 'pino';
import { escapeText, terminalSafeJson } from './core/escape.js';

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
    inputs.warn?.(`BOXSYNC_LOG_LEVEL=${escapeText(env.BOXSYNC_LOG_LEVEL ?? '')} is not a log level (${LOG_LEVELS.join(', ')}); ignored`);
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
  /**
   * Escape every string of each line (escapeLogLine) before it is written: for a destination that prints values
   * raw on a terminal (pino-pretty). Pretty output always is.
   */
  readonly escapeStrings?: boolean;
}

/**
 * One JSON log line with every string in it escaped (core/escape.ts), keys included: pino-pretty prints a
 * message, an error's stack and other values as they are, so a name holding `ESC[2J` or a newline would reach
 * the terminal raw. JSON itself escapes C0 controls only; this also catches DEL, C1 and bidi controls, and makes
 * the pretty printer show `\x1b[2J`. A line that is not JSON is escaped as text.
 */
export function escapeLogLine(line: string): string {
  const body = line.endsWith('\n') ? line.slice(0, -1) : line;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return `${escapeText(body)}\n`;
  }
  return `${JSON.stringify(escapeDeep(parsed, 0))}\n`;
}

function escapeDeep(v: unknown, depth: number): unknown {
  if (typeof v === 'string') return escapeText(v);
  if (v === null || typeof v !== 'object' || depth > 20) return v;
  if (Array.isArray(v)) return v.map((x) => escapeDeep(x, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[escapeText(k)] = escapeDeep(x, depth + 1);
  return out;
}

export function createLogger(setup: LoggerSetup = {}): Logger {
  const opts: LoggerOptions = {
    level: setup.level ?? logLevelFor('info'),
    redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
  };
  // JSON lines keep their values; only what JSON leaves raw and a terminal could act on is escaped.
  opts.hooks = { streamWrite: setup.escapeStrings ? escapeLogLine : terminalSafeJson };
  if (setup.destination) return pino(opts, setup.destination as pino.DestinationStream);
  const pretty = setup.pretty ?? Boolean(process.stdout.isTTY);
  if (pretty) {
    return pino({ ...opts, hooks: { streamWrite: escapeLogLine }, transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss' } } });
  }
  return pino(opts);
}

/** A logger that discards everything (library defaults, tests that do not look at logs). */
export const silentLogger: Logger = pino({ level: 'silent' });
