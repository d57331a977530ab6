/**
 * `sync --once` at scale: an initial sync of 10,000 files (1 GiB in all, mixed sizes) from box-server into an
 * empty folder, then a no-change `sync --once` on that mirror. Prints both wall times and the peak RSS of the
 * sync process (a real child process of the CLI, measured by `/usr/bin/time -v`, else by polling VmHWM).
 *
 * box-server runs in this process and is seeded through its control API (no HTTP), so the figures are the
 * client's. Its rate limiter is lifted in the config: real Box allows about 1000 calls a minute, which alone
 * would make 10,000 downloads take at least 10 minutes. Shrink with SYNC_BENCH_FILES and SYNC_BENCH_MIB.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { startBoxServer } from '../../src/box-server/index.js';
import { writeBoxConfig } from '../support/box-config.js';
import { repoRoot } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';

const FILES = Number(process.env.SYNC_BENCH_FILES ?? 10_000);
const TOTAL_BYTES = Number(process.env.SYNC_BENCH_MIB ?? 1024) * 1024 * 1024;
const FILES_PER_FOLDER = 100;
const TOKEN = 'SYNC-BENCH';

/** xorshift32: the same tree on every run. */
export function prng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 0x1_0000_0000;
  };
}

/**
 * Mixed sizes that add up to exactly TOTAL_BYTES: ~99.5 % small files (0..2x the small average, 30 % of the
 * bytes), ~0.45 % medium (18 %), ~0.05 % big (the rest, through the download path for large files).
 */
export function fileSizes(files: number, totalBytes: number, rand: () => number): number[] {
  const big = Math.max(1, Math.round(files * 0.0005));
  const medium = Math.max(1, Math.round(files * 0.0045));
  const small = Math.max(0, files - big - medium);
  const avgSmall = (0.3 * totalBytes) / Math.max(1, small);
  const sizes: number[] = [];
  for (let i = 0; i < small; i++) sizes.push(Math.floor(rand() * 2 * avgSmall));
  for (let i = 0; i < medium; i++) sizes.push(Math.floor((0.18 * totalBytes) / medium));
  const used = sizes.reduce((a, b) => a + b, 0);
  const rest = totalBytes - used;
  for (let i = 0; i < big; i++) sizes.push(i < big - 1 ? Math.floor(rest / big) : rest - Math.floor(rest / big) * (big - 1));
  // Interleave big and medium files among the small ones.
  for (let i = sizes.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [sizes[i], sizes[j]] = [sizes[j]!, sizes[i]!];
  }
  return sizes;
}

const BLOCK = ((): Buffer => {
  const r = prng(0x5eed);
  const b = Buffer.alloc(4 * 1024 * 1024);
  for (let i = 0; i < b.length; i += 4) b.writeUInt32LE(Math.floor(r() * 0x1_0000_0000), i);
  return b;
})();

/** Content of file `i`: a unique 16-byte header, then the block repeated from an offset of its own. */
export function content(i: number, size: number): Buffer {
  const out = Buffer.allocUnsafe(size);
  const header = Buffer.from(`file-${String(i).padStart(10, '0')}`);
  header.copy(out, 0, 0, Math.min(size, header.length));
  let pos = Math.min(size, header.length);
  let from = (i * 7919) % BLOCK.length;
  while (pos < size) {
    const n = BLOCK.copy(out, pos, from, Math.min(BLOCK.length, from + (size - pos)));
    pos += n;
    from = 0;
  }
  return out;
}

export interface Measured {
  readonly code: number | null;
  readonly wallMs: number;
  readonly peakRssKiB: number | null;
  /** User + system CPU seconds of the child (null without /usr/bin/time). */
  readonly cpuSeconds: number | null;
  readonly summary: string;
  /** With BOXSYNC_PHASES=1 in its environment, the child's `boxsync: phases: ...` line (else null). */
  readonly phases?: string | null;
}

/** Run `boxsync sync --once` as a child (with `env` added to its environment) and measure its wall time and peak RSS. */
export function measureSync(configFile: string, env: NodeJS.ProcessEnv = {}): Promise<Measured> {
  // bin/boxsync.js runs dist/ (`npm run bench` builds it first), as an installed boxsync does.
  return measureCommand([process.execPath, join(repoRoot, 'bin', 'boxsync.js'), 'sync', '--once', '--config', configFile], env);
}

/** Run any command as a child and measure its wall time, peak RSS and CPU seconds (by `/usr/bin/time -v` when present). */
export function measureCommand(command: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Measured> {
  const useTime = existsSync('/usr/bin/time');
  const node = [...command];
  const [cmd, ...args] = useTime ? ['/usr/bin/time', '-v', ...node] : node;
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(cmd!, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, BOXSYNC_LOG_LEVEL: 'warn', ...env } });
    let stdout = '';
    let stderrTail = '';
    let polledHwm: number | null = null;
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderrTail = (stderrTail + d.toString()).slice(-20_000)));
    const poll = useTime
      ? null
      : setInterval(() => {
          try {
            const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
            if (m) polledHwm = Math.max(polledHwm ?? 0, Number(m[1]));
          } catch {
            // exited between polls
          }
        }, 50);
    child.on('error', reject);
    child.on('close', (code) => {
      if (poll) clearInterval(poll);
      const wallMs = performance.now() - started;
      const timed = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderrTail);
      const exit = useTime ? /Exit status: (\d+)/.exec(stderrTail) : null;
      const user = /User time \(seconds\): ([\d.]+)/.exec(stderrTail);
      const sys = /System time \(seconds\): ([\d.]+)/.exec(stderrTail);
      resolve({
        code: exit ? Number(exit[1]) : code,
        wallMs,
        cpuSeconds: user && sys ? Number(user[1]) + Number(sys[1]) : null,
        peakRssKiB: timed ? Number(timed[1]) : polledHwm,
        summary: stdout.trim().split('\n').pop() ?? `(no summary; stderr: ${stderrTail.slice(-2000)})`,
        phases: /^boxsync: phases: (.*)$/m.exec(stderrTail)?.[1] ?? null,
      });
    });
  });
}

export async function treeStats(dir: string): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    files++;
    bytes += (await stat(join(e.parentPath, e.name))).size;
  }
  return { files, bytes };
}

const mib = (b: number): string => (b / (1024 * 1024)).toFixed(1);

export async function run(): Promise<void> {
  const tmp = await makeTempDir('boxsync-sync-bench-');
  // In memory (blobs still stream to a private temp dir): a persisted server rewrites its state file on every change.
  const srv = await startBoxServer({ port: 0, tokens: [TOKEN] });
  try {
    const web = srv.control.as('1');
    const root = web.createFolder('0', 'Bench');
    const sizes = fileSizes(FILES, TOTAL_BYTES, prng(42));
    const seedStart = performance.now();
    let folderId = root.id;
    for (let i = 0; i < sizes.length; i++) {
      if (i % FILES_PER_FOLDER === 0) folderId = web.createFolder(root.id, `dir-${String(i / FILES_PER_FOLDER).padStart(4, '0')}`).id;
      web.uploadFile(folderId, `file-${String(i).padStart(5, '0')}.bin`, content(i, sizes[i]!));
    }
    const totalBytes = sizes.reduce((a, b) => a + b, 0);
    console.log(`seeded box-server: ${FILES} files, ${mib(totalBytes)} MiB (largest ${mib(Math.max(...sizes))} MiB) in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`);

    const mirror = join(tmp.dir, 'mirror');
    const configFile = join(tmp.dir, 'config.json');
    await writeBoxConfig(configFile, {
      srv,
      token: TOKEN,
      remoteId: root.id,
      localPath: mirror,
      stateDir: join(tmp.dir, 'state'),
      socketPath: join(tmp.dir, 'control.sock'),
    });

    const first = await measureSync(configFile);
    const local = await treeStats(mirror);
    const ok = local.files === FILES && local.bytes === totalBytes;
    console.log(
      `initial sync --once: ${(first.wallMs / 1000).toFixed(1)} s, exit ${first.code}, peak RSS ${first.peakRssKiB === null ? 'n/a' : `${mib(first.peakRssKiB * 1024)} MiB`}, ` +
        `${(FILES / (first.wallMs / 1000)).toFixed(0)} files/s, ${mib(totalBytes / (first.wallMs / 1000))} MiB/s; ` +
        `mirror ${local.files} files / ${mib(local.bytes)} MiB ${ok ? '(complete)' : '(INCOMPLETE)'}`,
    );
    console.log(`  ${first.summary}`);

    const second = await measureSync(configFile);
    console.log(
      `no-change sync --once: ${(second.wallMs / 1000).toFixed(1)} s, exit ${second.code}, peak RSS ${second.peakRssKiB === null ? 'n/a' : `${mib(second.peakRssKiB * 1024)} MiB`}`,
    );
    console.log(`  ${second.summary}`);
  } finally {
    await srv.close();
    await tmp.cleanup();
  }
}
