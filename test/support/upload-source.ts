/**
 * Uploads read local files only through the LocalFs port (LocalFs.openForUpload). Tests of the Box adapter that
 * upload a file at an absolute path open it here, the way the engine's executor does: with the real LocalFs rooted
 * at the file's folder. `uploadSource` closes the reader when the test ends; `openUploadSource` (for child
 * processes outside vitest) leaves that to the caller.
 */
import { onTestFinished } from 'vitest';
import type { UploadReader } from '../../src/ports/local-fs.js';
import { openUploadSource } from './open-upload-source.js';

export { openUploadSource };

/** `absPath` opened for upload (with `expect`: refused when it no longer matches that stat); closed after the test. */
export async function uploadSource(absPath: string, expect?: { sizeBytes: number; mtimeMs: number; inode: number }): Promise<UploadReader> {
  const reader = await openUploadSource(absPath, expect);
  onTestFinished(() => reader.close());
  return reader;
}
