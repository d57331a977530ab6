/**
 * Vitest global setup: builds the native inotify addon when this checkout has not built it yet (a worktree made
 * without `npm ci`), so the watcher tests run the native watcher, not the fallback. A no-op once built.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './cli.js';

export default function setup(): void {
  if (process.platform !== 'linux' || existsSync(join(repoRoot, 'build', 'Release', 'boxsync_inotify.node'))) return;
  spawnSync(process.execPath, [join(repoRoot, 'scripts', 'build-native.mjs')], { cwd: repoRoot, stdio: 'inherit' });
}
