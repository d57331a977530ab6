/**
 * Issue 26, point 5: every name boxsync prints is escaped (core/escape.ts). Names holding ESC[2J, a newline, a C1
 * control (U+009B, a one-byte CSI on some terminals) and a bidi override go through the real CLI, on a pipe
 * (per-operation lines, the PARKED list, JSON log lines), on a terminal (`script`: the progress bar and
 * pino-pretty's log lines) and through the daemon (`boxsync status`, text and --json). No raw control byte of
 * theirs reaches stdout or stderr, and each is shown in its escaped form.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { cliEntry, repoRoot, runCli, spawnCli } from '../support/cli.js';
import { waitFor } from '../support/wait.js';
import { createHarness, type Harness } from '../daemon/daemon-harness.js';
import { explain, readText, startSyncEnv, writeText } from './sync-harness.js';

const envs: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const e of envs.splice(0).reverse()) await e.close();
});

/** Local names Box refuses (each a FAILED `report` line) and Box names Linux holds (each a download line). */
const LOCAL_NAMES = ['esc\u001b[2J\u001b[31mred.txt', 'new\nline.txt'];
const BOX_NAMES = ['csi\u009b2J.txt', 'bidi\u202etxt.exe'];
const ESCAPED = ['esc\\x1b[2J\\x1b[31mred.txt', 'new\\x0aline.txt', 'csi\\x9b2J.txt', 'bidi\\u{202e}txt.exe'];

/** A C0 control other than the newline that ends a line, DEL, C1, or a bidi control. */
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

async function seed(write: (name: string, content: string) => Promise<void>, upload: (name: string, content: string) => void): Promise<void> {
  for (const name of LOCAL_NAMES) await write(name, `local ${name.length}`);
  for (const name of BOX_NAMES) upload(name, `box ${name.length}`);
}

/** The real CLI on a pseudo-terminal (util-linux `script`), stdout and stderr together. */
function runOnTty(args: readonly string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const tsx = pathToFileURL(createRequire(join(repoRoot, 'package.json')).resolve('tsx')).href;
  const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, '--import', tsx, cliEntry, ...args].map(quote).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], { cwd: repoRoot, env: { ...process.env, ...env, COLUMNS: '200' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`boxsync on a terminal did not exit in time:\n${output}`));
    }, 90_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('every name printed is escaped', () => {
  it('sync --once on a pipe: per-operation lines, the PARKED list and JSON log lines hold no raw control byte', async () => {
    const env = await startSyncEnv();
    envs.push(env);
    await seed((n, c) => writeText(join(env.mirror, n), c), (n, c) => void env.web.uploadFile(env.remoteRootId, n, c));
    for (const level of ['warn', 'debug']) {
      const r = await env.sync([], { env: { BOXSYNC_LOG_LEVEL: level } });
      const out = r.stdout + r.stderr;
      expect(r.code, explain(r)).toBe(1);
      expect(out, explain(r)).not.toMatch(RAW_CONTROL);
      for (const shown of level === 'warn' ? ESCAPED : ESCAPED.slice(0, 2)) expect(out, explain(r)).toContain(shown);
      // A newline in a name never splits a line: no line starts with the name's second half.
      expect(out).not.toMatch(/^line\.txt/m);
    }
    // The Box names synced as they are (escaping is for the terminal only).
    for (const name of BOX_NAMES) expect(await readText(join(env.mirror, name))).toBe(`box ${name.length}`);
  });

  it('sync --once on a terminal: the progress bar and pino-pretty log lines show names escaped', async () => {
    const env = await startSyncEnv();
    envs.push(env);
    await seed((n, c) => writeText(join(env.mirror, n), c), (n, c) => void env.web.uploadFile(env.remoteRootId, n, c));
    const r = await runOnTty(['sync', '--once', '--config', env.configFile], { BOXSYNC_LOG_LEVEL: 'debug' });
    expect(r.code, r.output).toBe(1);
    // The bar and the pretty printer draw with escape sequences of their own; the names' never reach the terminal.
    expect(r.output).not.toContain('\u001b[2J');
    expect(r.output).not.toContain('\u001b[31mred');
    expect(r.output).not.toMatch(/[\u0080-\u009f\u202a-\u202e]/);
    expect(r.output).not.toMatch(/^line\.txt/m);
    expect(r.output).toContain('esc\\x1b[2J\\x1b[31mred.txt');
    expect(r.output).toContain('new\\x0aline.txt');
  });

  it('boxsync status, text and --json, shows the daemon\'s failing names escaped', async () => {
    const h: Harness = await createHarness();
    envs.push(h);
    await seed((n, c) => writeText(join(h.mirror, n), c), (n, c) => void h.web.uploadFile(h.rootId, n, c));
    // The daemon's first pass parks the two local names (Box refuses them): it never reports a clean sync.
    const daemon = spawnCli(['daemon', '--config', h.configFile]);
    const exited = new Promise((r) => daemon.on('close', r));
    envs.push({ close: async () => void (daemon.exitCode === null && daemon.kill('SIGKILL'), await exited) });
    await waitFor(async () => ((await h.status().catch(() => null))?.engine.errors.length ?? 0) >= 2 || null, { timeoutMs: 60_000, what: 'the daemon to report both names' });
    const text = await runCli(['status', '--config', h.configFile]);
    expect(text.code, explain(text)).toBe(1);
    expect(text.stdout + text.stderr).not.toMatch(RAW_CONTROL);
    expect(text.stdout).toContain('esc\\x1b[2J\\x1b[31mred.txt');
    expect(text.stdout).toContain('new\\x0aline.txt');
    const json = await runCli(['status', '--json', '--config', h.configFile]);
    expect(json.stdout + json.stderr).not.toMatch(RAW_CONTROL);
    // The JSON keeps the exact names (JSON escapes), for scripts.
    const parsed = JSON.parse(json.stdout) as { engine: { errors: { path: string }[] } };
    expect(parsed.engine.errors.map((e) => e.path).sort()).toEqual([...LOCAL_NAMES].sort());
    daemon.kill('SIGTERM');
    await exited;
  });
});
