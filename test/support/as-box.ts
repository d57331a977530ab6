/**
 * `boxsync server --as-box` for tests: start it as a real child process, read the lines it prints (proxy, CA file,
 * token), stop it; and an HTTPS client that goes through its CONNECT proxy to Box's host names, trusting only its CA.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { request } from 'node:https';
import { HttpsProxyAgent } from 'hpagent';
import { spawnCli } from './cli.js';
import { waitFor } from './wait.js';

export interface AsBoxLines {
  /** box-server's own address (https://127.0.0.1:PORT), the first line. */
  readonly baseUrl: string;
  readonly proxyUrl: string;
  readonly caFile: string;
  readonly token: string;
}

/** The values of the lines `--as-box` prints (unquoted paths only: tests use temp dirs without spaces). */
export function parseAsBoxLines(stdout: string): AsBoxLines | null {
  const lines = stdout.split('\n');
  const proxy = /^export HTTPS_PROXY=(\S+)/m.exec(stdout)?.[1];
  const ca = /^export NODE_EXTRA_CA_CERTS=(\S+)$/m.exec(stdout)?.[1];
  const token = /^export BOX_DEVELOPER_TOKEN=(\S+)$/m.exec(stdout)?.[1];
  if (!proxy || !ca || !token || !lines[0]) return null;
  return { baseUrl: lines[0], proxyUrl: proxy, caFile: ca, token };
}

export interface AsBoxChild extends AsBoxLines {
  readonly child: ChildProcess;
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** SIGTERM, and the exit code. */
  stop(): Promise<number | null>;
}

export async function startAsBoxChild(args: readonly string[]): Promise<AsBoxChild> {
  const child = spawnCli(['server', '--as-box', ...args]);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  let exited = false;
  child.on('exit', () => (exited = true));
  try {
    const lines = await waitFor(
      () => {
        if (exited) throw new Error(`boxsync server --as-box exited early: ${stderr}`);
        return parseAsBoxLines(stdout);
      },
      { timeoutMs: 60_000, what: `the --as-box lines (stderr: ${stderr})` },
    );
    return {
      ...lines,
      child,
      stdout: () => stdout,
      stderr: () => stderr,
      async stop() {
        if (exited) return child.exitCode;
        const done = once(child, 'exit');
        child.kill('SIGTERM');
        const [code] = (await done) as [number | null];
        return code;
      },
    };
  } catch (e) {
    child.kill('SIGKILL');
    throw e;
  }
}

export interface HttpsReply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
  json(): Record<string, unknown>;
}

/** One HTTPS request, through `proxyUrl` when given (CONNECT), trusting only `ca`. */
export function httpsCall(
  method: string,
  url: string,
  opts: { ca: string | Buffer; proxyUrl?: string; token?: string; body?: string | Buffer; headers?: Record<string, string> },
): Promise<HttpsReply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
    if (opts.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(opts.body));
    const agent = opts.proxyUrl ? new HttpsProxyAgent({ proxy: opts.proxyUrl, ca: [opts.ca], keepAlive: false }) : undefined;
    const req = request(url, { method, headers, ca: opts.ca, agent, timeout: 30_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body.toString('utf8')) as Record<string, unknown> });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${url}: no answer within 30 s`)));
    req.on('error', reject);
    req.end(opts.body);
  });
}
