/**
 * Run the real boxsync CLI as a child process (from the TypeScript sources through tsx, so tests never
 * depend on a stale build).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const cliEntry = join(repoRoot, 'src', 'cli', 'main.ts');
/** tsx's loader by absolute URL, so that the CLI also starts from a cwd outside the repository (relative paths). */
const tsxLoader = pathToFileURL(createRequire(join(repoRoot, 'package.json')).resolve('tsx')).href;

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** An unprivileged user to run the CLI as (tests run as root, where permissions deny nothing). */
export interface RunAs {
  readonly uid: number;
  readonly gid: number;
}

export function spawnCli(args: readonly string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; stdin?: 'pipe'; as?: RunAs } = {}): ChildProcess {
  return spawn(process.execPath, ['--import', tsxLoader, cliEntry, ...args], {
    cwd: opts.cwd ?? repoRoot,
    ...(opts.as ? { uid: opts.as.uid, gid: opts.as.gid } : {}),
    env: { ...process.env, ...opts.env },
    stdio: [opts.stdin ?? 'ignore', 'pipe', 'pipe'],
  });
}

export function runCli(
  args: readonly string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number; as?: RunAs } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawnCli(args, opts);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`boxsync ${args.join(' ')} did not exit within ${opts.timeoutMs ?? 60_000} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, opts.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}
