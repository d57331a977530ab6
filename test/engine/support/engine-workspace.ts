/**
 * What both engine harnesses (harness.ts on the in-memory store, box-harness.ts on box-server) stand on: a real
 * temp dir with the mirror at Box/ and the state at state/ (journal at state/journal.db), the real LocalFs over
 * the mirror with its trash in the state dir, the engine options every engine test starts from, and file
 * helpers relative to the mirror.
 */
import * as nodeFs from 'node:fs';
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { EngineOptions } from '../../../src/engine/types.js';
import type { FileWorkerPool } from '../../../src/local/file-workers.js';
import { createLocalFs } from '../../../src/local/local-fs.js';
import { createLocalTrash } from '../../../src/local/local-trash.js';
import { silentLogger } from '../../../src/logger.js';
import type { LocalFs } from '../../../src/ports/local-fs.js';
import { makeTempDir } from '../../support/tmp.js';
import type { SyncRoot } from '../../../src/core/model.js';
import { createIgnoreMatcher, type IgnoreMatcher } from '../../../src/local/ignore.js';

export interface EngineWorkspace {
  readonly dir: string;
  readonly localPath: string;
  readonly stateDir: string;
  readonly journalPath: string;
  readonly localFs: LocalFs;
  /** Removes the whole temp dir. */
  cleanup(): Promise<void>;
}

export async function makeEngineWorkspace(prefix: string, opts: { readonly fileWorkers?: FileWorkerPool } = {}): Promise<EngineWorkspace> {
  const tmp = await makeTempDir(prefix);
  const localPath = join(tmp.dir, 'Box');
  const stateDir = join(tmp.dir, 'state');
  await mkdir(localPath, { recursive: true });
  await mkdir(stateDir, { recursive: true });
  const localFs = createLocalFs({
    rootPath: localPath,
    fs: nodeFs,
    trash: createLocalTrash({ mode: 'state', stateDir, fs: nodeFs, logger: silentLogger }),
    logger: silentLogger,
    fileWorkers: opts.fileWorkers,
  });
  return { dir: tmp.dir, localPath, stateDir, journalPath: join(stateDir, 'journal.db'), localFs, cleanup: tmp.cleanup };
}

/** The production ignore rules of a root (src/local/ignore.ts): the engine keeps no list of its own. */
export function ignoreFor(root: SyncRoot): IgnoreMatcher {
  return createIgnoreMatcher(root.exclude);
}

/** Two-way defaults with room for the deletes tests make; `overrides` win. */
export function engineTestOptions(stateDir: string, overrides: Partial<EngineOptions>): EngineOptions {
  return {
    streamType: 'changes',
    transferConcurrency: 4,
    maxDeletes: 100,
    maxDeleteFraction: 0.5,
    ...overrides,
  };
}

export interface MirrorFiles {
  /** Writes a file, creating its parent folders. */
  write(rel: string, content: string | Buffer): Promise<void>;
  read(rel: string): Promise<string>;
  /** True for a file or a folder. */
  exists(rel: string): Promise<boolean>;
  /** Names in a folder of the mirror (the root by default), sorted. */
  list(rel?: string): Promise<string[]>;
  remove(rel: string): Promise<void>;
}

export function mirrorFiles(localPath: string): MirrorFiles {
  return {
    async write(rel, content) {
      const abs = join(localPath, rel);
      await mkdir(dirname(abs), { recursive: true });
      await writeFile(abs, content);
    },
    read: (rel) => readFile(join(localPath, rel), 'utf8'),
    exists: (rel) =>
      readFile(join(localPath, rel)).then(
        () => true,
        (e: NodeJS.ErrnoException) => e.code === 'EISDIR',
      ),
    list: async (rel = '') => (await readdir(join(localPath, rel))).sort(),
    remove: (rel) => rm(join(localPath, rel), { recursive: true, force: true }),
  };
}
