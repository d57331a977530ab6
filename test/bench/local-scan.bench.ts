/**
 * Local scan benchmark on a real temp directory: 10,000 files of 1 KiB in 100 folders. First scan hashes every
 * file; the rescan with `known` (as the engine does) only lstats. Prints figures; asserts nothing about speed.
 */
import * as nodeFs from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LocalEntry, RelPath } from '../../src/core/model.js';
import { createIgnoreMatcher } from '../../src/local/ignore.js';
import { createLocalFs } from '../../src/local/local-fs.js';
import { createLocalTrash } from '../../src/local/local-trash.js';
import { makeTempDir } from '../support/tmp.js';

const ms = (t0: bigint): string => `${(Number(process.hrtime.bigint() - t0) / 1e6).toFixed(0)} ms`;

export async function run(): Promise<void> {
  const tmp = await makeTempDir('boxsync-bench-scan-');
  try {
    const root = join(tmp.dir, 'root');
    const body = Buffer.alloc(1024, 0x61);
    for (let d = 0; d < 100; d++) {
      await mkdir(join(root, `dir${d}`), { recursive: true });
      await Promise.all(Array.from({ length: 100 }, (_, f) => writeFile(join(root, `dir${d}`, `file${f}.txt`), body)));
    }
    const local = createLocalFs({ rootPath: root, fs: nodeFs, trash: createLocalTrash({ mode: 'state', stateDir: tmp.dir, fs: nodeFs }) });
    const isIgnored = createIgnoreMatcher([]);
    const known = new Map<RelPath, LocalEntry>();

    const heap0 = process.memoryUsage().heapUsed;
    let t0 = process.hrtime.bigint();
    let maxBatch = 0;
    for await (const batch of local.scan({ isIgnored, hash: true })) {
      maxBatch = Math.max(maxBatch, batch.length);
      for (const e of batch) known.set(e.path, e);
    }
    console.log(`first scan, hashing 10,000 files of 1 KiB (+100 folders): ${ms(t0)}; largest batch ${maxBatch}`);

    t0 = process.hrtime.bigint();
    let n = 0;
    for await (const batch of local.scan({ isIgnored, hash: true, known: (p) => known.get(p) })) n += batch.length;
    console.log(`rescan of ${n.toLocaleString('en')} entries with known hashes (lstat only): ${ms(t0)}`);
    console.log(`heap growth over both scans (includes the caller's 10,100-entry map): ${((process.memoryUsage().heapUsed - heap0) / 1048576).toFixed(1)} MiB`);
  } finally {
    await tmp.cleanup();
  }
}
