/**
 * The daemon's web page over real HTTP: the port from the state dir's ui-port file, a login link from
 * `boxsync ui --print-url` (a real CLI child over the control socket), and requests with any Host, Origin and
 * cookie (node:http: fetch cannot set Host).
 */
import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { runCli } from '../../support/cli.js';
import type { Harness } from '../daemon-harness.js';
import { fakeCommand, type FakeCommand } from '../../support/fake-command.js';
import { makeTempDir } from '../../support/tmp.js';
import type { Page } from 'playwright-core';
import { launchChromium } from './browser.js';

export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

export async function uiPort(h: Harness): Promise<number> {
  return Number((await readFile(join(h.dir, 'state', 'ui-port'), 'utf8')).trim());
}

/** A fresh one-time login link, as `boxsync ui --print-url` prints it. */
export async function loginLink(h: Harness): Promise<string> {
  const r = await runCli(['ui', '--print-url', '--config', h.configFile]);
  if (r.code !== 0) throw new Error(`boxsync ui --print-url exited ${r.code}: ${r.stderr}`);
  return r.stdout.trim();
}

export function http(
  port: number,
  path: string,
  opts: { method?: string; host?: string; cookie?: string; origin?: string; json?: unknown } = {},
): Promise<Answer> {
  const body = opts.json === undefined ? undefined : JSON.stringify(opts.json);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: opts.method ?? (body === undefined ? 'GET' : 'POST'),
        headers: {
          host: opts.host ?? `127.0.0.1:${port}`,
          ...(opts.cookie ? { cookie: opts.cookie } : {}),
          ...(opts.origin ? { origin: opts.origin } : {}),
          ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }),
        },
        timeout: 15_000,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer from the web page for ${path}`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** Log in with a fresh link: the session cookie ("name=value"). */
export async function login(h: Harness, port: number): Promise<string> {
  const link = new URL(await loginLink(h));
  const r = await http(port, `${link.pathname}${link.search}`);
  const set = r.headers['set-cookie'];
  const cookie = (Array.isArray(set) ? set[0] : set)?.split(';')[0];
  if (r.status !== 303 || cookie === undefined) throw new Error(`login failed: ${r.status} ${r.body}`);
  return cookie;
}

/** A fake `xdg-open` first on PATH: it records its arguments and opens nothing. */
export function fakeXdgOpen(dir: string): Promise<FakeCommand> {
  return fakeCommand(dir, 'xdg-open');
}

export interface LoggedInPage {
  readonly page: Page;
  readonly port: number;
  /** Close the browser and remove its profile. */
  close(): Promise<void>;
}

/** Debian's chromium with a fresh profile, logged in to the harness daemon's page with a one-time link. */
export async function openLoggedInPage(h: Harness): Promise<LoggedInPage> {
  const port = await uiPort(h);
  const profile = await makeTempDir('boxsync-chromium-');
  const browser = await launchChromium(profile.dir);
  const page = await browser.newPage();
  await page.goto(await loginLink(h));
  return {
    page,
    port,
    close: async () => {
      await browser.close();
      await profile.cleanup();
    },
  };
}
