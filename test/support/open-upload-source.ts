/** `absPath` opened for upload through the real LocalFs rooted at its folder (see upload-source.ts); no vitest here. */
import * as nodeFs from 'node:fs';
import { basename, dirname } from 'node:path';
import { asRelPath } from '../../src/core/model.js';
import { createLocalFs } from '../../src/local/local-fs.js';
import { createLocalTrash } from '../../src/local/local-trash.js';
import type { UploadReader } from '../../src/ports/local-fs.js';

export function openUploadSource(absPath: string, expect?: { sizeBytes: number; mtimeMs: number; inode: number }): Promise<UploadReader> {
  const dir = dirname(absPath);
  // Opening for upload never trashes: the trash is only there because a LocalFs needs one.
  const fs = createLocalFs({ rootPath: dir, fs: nodeFs, trash: createLocalTrash({ mode: 'state', stateDir: dir, fs: nodeFs }) });
  return fs.openForUpload(asRelPath(basename(absPath)), expect);
}
