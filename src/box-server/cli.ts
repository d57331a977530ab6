/**
 * `boxsync server [--host 127.0.0.1] [--port 0] [--data DIR] [--token TOKEN]... [--sample] [--access-token-ttl SEC]
 * [--log-requests] [--box-limits] [--tls-cert FILE --tls-key FILE] [--as-box [--proxy-port PORT]]`: prints the base URL as the first line on stdout
 * (with --as-box, then the lines to paste: see as-box.ts), then serves until SIGINT/SIGTERM, closes, and
 * resolves 0. Bad arguments print a usage error on stderr and resolve 2 without starting anything.
 */
import { readFileSync } from 'node:fs';
import { startAsBox, type AsBoxOptions } from './as-box.js';
import { startBoxServer } from './index.js';
import type { BoxServerOptions } from './types.js';

/** What the command line asks for: the server's options, and whether it acts as Box (`--as-box`). */
export interface ServerCliOptions extends BoxServerOptions {
  asBox?: AsBoxOptions;
}

const usage =
  'usage: boxsync server [--host 127.0.0.1] [--port 0] [--data DIR] [--token TOKEN]... [--sample] [--access-token-ttl SEC] [--log-requests] [--box-limits] [--tls-cert FILE --tls-key FILE] [--as-box [--proxy-port PORT]]';

export function parseServerArgs(args: readonly string[]): ServerCliOptions {
  const opts: ServerCliOptions = {};
  let asBox = false;
  let proxyPort: number | undefined;
  const tokens: string[] = [];
  let tlsCert: string | undefined;
  let tlsKey: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const [flag, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string => {
      const v = inline ?? args[++i];
      if (v === undefined || v === '') throw new Error(`${flag} needs a value`);
      return v;
    };
    const int = (min: number, max: number): number => {
      const v = value();
      const n = Number(v);
      if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${flag} must be an integer from ${min} to ${max}, got ${v}`);
      return n;
    };
    switch (flag) {
      case '--host':
        opts.host = value();
        break;
      case '--port':
        opts.port = int(0, 65535);
        break;
      case '--data':
        opts.dataDir = value();
        break;
      case '--token':
        tokens.push(value());
        break;
      case '--sample':
        opts.sample = true;
        break;
      case '--access-token-ttl':
        opts.accessTokenTtlSec = int(1, 365 * 86_400);
        break;
      case '--log-requests':
        opts.logRequests = true;
        break;
      case '--box-limits':
        opts.boxLimits = true;
        break;
      case '--tls-cert':
        tlsCert = value();
        break;
      case '--tls-key':
        tlsKey = value();
        break;
      case '--as-box':
        asBox = true;
        break;
      case '--proxy-port':
        proxyPort = int(0, 65535);
        break;
      default:
        throw new Error(`unknown option ${arg}`);
    }
  }
  if (tokens.length > 0) opts.tokens = tokens;
  if ((tlsCert === undefined) !== (tlsKey === undefined)) throw new Error('--tls-cert and --tls-key go together');
  if (proxyPort !== undefined && !asBox) throw new Error('--proxy-port goes with --as-box');
  if (asBox) {
    if (tlsCert !== undefined) throw new Error('--as-box makes its own certificate: leave out --tls-cert and --tls-key');
    if (opts.host !== undefined && opts.host !== '127.0.0.1') throw new Error('--as-box listens on 127.0.0.1 only: leave out --host');
    opts.asBox = proxyPort === undefined ? {} : { proxyPort };
  }
  if (tlsCert !== undefined && tlsKey !== undefined) {
    const read = (flag: string, file: string): Buffer => {
      try {
        return readFileSync(file);
      } catch (e) {
        throw new Error(`${flag}: cannot read ${file}: ${e instanceof Error ? e.message : String(e)}`);
      }
    };
    opts.tls = { cert: read('--tls-cert', tlsCert), key: read('--tls-key', tlsKey) };
  }
  return opts;
}

export async function runServerCli(args: readonly string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  let opts: ServerCliOptions;
  try {
    opts = parseServerArgs(args);
  } catch (e) {
    process.stderr.write(`boxsync server: ${e instanceof Error ? e.message : String(e)}; nothing was started\n${usage}\n`);
    return 2;
  }
  let server: { close(): Promise<void> };
  try {
    const { asBox, ...serverOpts } = opts;
    if (asBox) {
      const box = await startAsBox(serverOpts, asBox);
      process.stdout.write(`${box.server.baseUrl}\n${box.instructions}\n`);
      server = box;
    } else {
      const plain = await startBoxServer(serverOpts);
      process.stdout.write(`${plain.baseUrl}\n`);
      server = plain;
    }
  } catch (e) {
    process.stderr.write(`boxsync server: could not start: ${e instanceof Error ? e.message : String(e)}\n`);
    return 2;
  }
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await server.close();
  return 0;
}
