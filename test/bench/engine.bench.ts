/**
 * The engine's first pass over an existing mirror: N small files in N/20 folders, the same tree on disk and in
 * box-server, so every file ends up `link`ed by SHA-1 and nothing is transferred. Then a no-change pass by a new
 * engine and journal connection (as the next `sync --once` process would run it). Prints the wall time of each
 * pass, the time spent per engine phase (listing, scanning, planning, transferring), and memory: the RSS once
 * the tree is seeded and the peak RSS sampled during each pass. This process also holds box-server and its
 * in-memory tree, so the growth over the "before" figure is what the engine adds. Shrink or grow with
 * ENGINE_BENCH_FILES (default 20,000).
 */
import { spawn } from 'node:child_process';
import * as nodeFs from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startBoxServer } from '../../src/box-server/index.js';
import { asRemoteId, asRootId, type SyncRoot } from '../../src/core/model.js';
import type { RunSummary, StatusReport } from '../../src/engine/types.js';
import { openJournal } from '../../src/journal/index.js';
import type { Journal } from '../../src/ports/journal.js';
import { writeBoxConfig } from '../support/box-config.js';
import { cliEntry, repoRoot } from '../support/cli.js';
import { boxServerAdapter, engineOnBox } from '../engine/support/box-harness.js';
import { engineTestOptions, makeEngineWorkspace } from '../engine/support/engine-workspace.js';

const FILES = Number(process.env.ENGINE_BENCH_FILES ?? 20_000);
const FILES_PER_FOLDER = 20;
const TOKEN = 'ENGINE-BENCH';

interface PassFigures {
  readonly summary: RunSummary;
  readonly wallMs: number;
  readonly phaseMs: ReadonlyMap<string, number>;
  /** Sampled every 100 ms during the pass. */
  readonly peakRssBytes: number;
}

/** `boxsync sync --once` as a child under /usr/bin/time -v: wall time, exit code and the child's own peak RSS. */
function syncOnceChild(configFile: string): Promise<{ wallMs: number; code: number | null; peakRssMiB: number | null; summary: string }> {
  const node = [process.execPath, '--import', 'tsx', cliEntry, 'sync', '--once', '--config', configFile];
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('/usr/bin/time', ['-v', ...node], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, BOXSYNC_LOG_LEVEL: 'warn' } });
    let stdout = '';
    let stderrTail = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderrTail = (stderrTail + d.toString()).slice(-20_000)));
    child.on('error', reject);
    child.on('close', (code) => {
      const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderrTail);
      const exit = /Exit status: (\d+)/.exec(stderrTail);
      resolve({
        wallMs: performance.now() - started,
        code: exit ? Number(exit[1]) : code,
        peakRssMiB: rss ? Math.round(Number(rss[1]) / 1024) : null,
        summary: stdout.trim().split('\n').pop() ?? `(no summary; stderr: ${stderrTail.slice(-2000)})`,
      });
    });
  });
}

const mib = (bytes: number): number => Math.round(bytes / (1024 * 1024));

function fileContent(i: number): string {
  return `file ${i}\n`.padEnd(1024, '.');
}

export async function run(): Promise<void> {
  const tmp = await makeEngineWorkspace('boxsync-engine-bench-');
  const { localPath, stateDir, localFs } = tmp;
  const srv = await startBoxServer({ port: 0, tokens: [TOKEN], longPollTimeoutMs: 1000 });
  try {
    const actor = srv.control.as('1');
    const top = actor.createFolder('0', 'Sync');
    const folders = Math.ceil(FILES / FILES_PER_FOLDER);
    for (let f = 0; f < folders; f++) {
      const name = `d${String(f).padStart(5, '0')}`;
      const folder = actor.createFolder(top.id, name);
      await mkdir(join(localPath, name), { recursive: true });
      for (let i = f * FILES_PER_FOLDER; i < Math.min(FILES, (f + 1) * FILES_PER_FOLDER); i++) {
        const body = fileContent(i);
        actor.uploadFile(folder.id, `f${i}.txt`, body);
        await writeFile(join(localPath, name, `f${i}.txt`), body);
      }
    }
    const root: SyncRoot = { id: asRootId('r1'), remoteId: asRemoteId(top.id), localPath, direction: 'two-way', exclude: [] };
    const options = engineTestOptions(stateDir, {});
    const pass = async (journal: Journal): Promise<PassFigures> => {
      const adapter = boxServerAdapter(srv, TOKEN, journal, 600_000);
      const phaseMs = new Map<string, number>();
      let phase = 'start';
      let since = performance.now();
      const onStatus = (s: StatusReport): void => {
        if (s.phase === phase) return;
        const now = performance.now();
        phaseMs.set(phase, (phaseMs.get(phase) ?? 0) + now - since);
        phase = s.phase;
        since = now;
      };
      const engine = engineOnBox({ journal, adapter, root, localFs, options }, { onStatus });
      let peakRssBytes = process.memoryUsage.rss();
      const sampler = setInterval(() => (peakRssBytes = Math.max(peakRssBytes, process.memoryUsage.rss())), 100);
      const started = performance.now();
      const summary = await engine.runOnce();
      const wallMs = performance.now() - started;
      clearInterval(sampler);
      await engine.close();
      return { summary, wallMs, phaseMs, peakRssBytes };
    };
    const { journalPath } = tmp;
    const print = (label: string, p: PassFigures): void => {
      const phases = [...p.phaseMs].filter(([k]) => k !== 'start').map(([k, v]) => `${k} ${(v / 1000).toFixed(1)} s`).join(', ');
      console.log(`${label}: ${(p.wallMs / 1000).toFixed(1)} s (${phases}); ${p.summary.outcome}, ${p.summary.passes} passes, ops ${JSON.stringify(p.summary.ops)}; peak RSS ${mib(p.peakRssBytes)} MiB`);
    };
    global.gc?.();
    console.log(`engine: ${FILES} files of 1 KiB in ${folders} folders, on disk and in box-server; RSS before the passes ${mib(process.memoryUsage.rss())} MiB`);
    const j1 = openJournal(journalPath).journal;
    print('first pass (link by SHA-1)', await pass(j1));
    j1.close();
    const j2 = openJournal(journalPath).journal;
    print('no-change pass (new process)', await pass(j2));
    j2.close();
    // The same two passes by the CLI in a child process, on a state dir of its own: its peak RSS is the engine's
    // alone (box-server stays in this process).
    if (nodeFs.existsSync('/usr/bin/time')) {
      const configFile = join(tmp.dir, 'config.json');
      await writeBoxConfig(configFile, {
        srv,
        token: TOKEN,
        remoteId: top.id,
        localPath,
        stateDir: join(tmp.dir, 'state-cli'),
        socketPath: join(tmp.dir, 'control.sock'),
      });
      for (const label of ['first pass', 'no-change pass']) {
        const r = await syncOnceChild(configFile);
        console.log(`sync --once child, ${label}: ${(r.wallMs / 1000).toFixed(1)} s, exit ${r.code}, peak RSS ${r.peakRssMiB ?? 'n/a'} MiB; ${r.summary}`);
      }
    }
    console.log(`peak RSS of the bench process over the whole run, seeding included: ${Math.round(process.resourceUsage().maxRSS / 1024)} MiB`);
  } finally {
    await srv.close();
    await tmp.cleanup();
  }
}
