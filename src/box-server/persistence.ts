/**
 * Metadata persistence for `--data DIR`: the whole ServerState as one JSON file, replaced atomically (temp file,
 * fsync, rename, fsync of the directory) after every change, so a kill -9 leaves either the old or the new state.
 */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { ServerState } from './state.js';

const stateFile = 'state.json';

export function loadState(dataDir: string): ServerState | null {
  const path = join(dataDir, stateFile);
  if (!existsSync(path)) return null;
  const text = readFileSync(path, 'utf8');
  try {
    return JSON.parse(text) as ServerState;
  } catch (e) {
    throw new Error(`box-server: ${path} is not valid JSON (${String(e)}); fix or move it away, nothing was changed`);
  }
}

export function saveState(dataDir: string, state: ServerState): void {
  const path = join(dataDir, stateFile);
  const tmp = `${path}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, JSON.stringify(state));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  const dirFd = openSync(dataDir, 'r');
  try {
    fsyncSync(dirFd);
  } finally {
    closeSync(dirFd);
  }
}
