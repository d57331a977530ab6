import * as nodeFs from 'node:fs';
import { QuickGate } from '../../src/local/quick-fs.js';
import { openTempFile } from '../../src/local/temp-file.js';
import type { TempFile } from '../../src/ports/local-fs.js';

/** A new, empty temp file at `path` (absolute, not there yet), as LocalFs.openTemp opens one: a download's destFile. */
export function tempFileAt(path: string): Promise<TempFile> {
  return openTempFile(nodeFs, new QuickGate(true, 0.5), path, path);
}
