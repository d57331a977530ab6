/**
 * The executor's download of new bytes (engine/executor.ts), for the tests of the worker commits
 * (worker-commit.test.ts, worker-replace.test.ts): openTemp with its commit, write, syncAndClose, commitTemp; on a
 * failure the temp file is closed and discarded, as the executor does.
 */
import { asRelPath, type LocalEntry } from '../../src/core/model.js';
import type { LocalGuard } from '../../src/core/operations.js';
import type { LocalFs } from '../../src/ports/local-fs.js';

export async function downloadThrough(
  fs: LocalFs,
  path: string,
  data: string,
  commit: { readonly guard: LocalGuard; readonly mtimeMs: number; readonly sha1: string },
  afterClose?: () => Promise<void>,
): Promise<LocalEntry> {
  const rel = asRelPath(path);
  const file = await fs.openTemp(rel, { expectedBytes: Buffer.byteLength(data), commit });
  try {
    await file.write(Buffer.from(data));
    await file.syncAndClose();
    await afterClose?.();
    return await fs.commitTemp(file.path, rel, commit.guard, commit.mtimeMs, { synced: true });
  } catch (e) {
    await file.close();
    await fs.discardTemp(file.path);
    throw e;
  }
}
