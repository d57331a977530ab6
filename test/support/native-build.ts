/**
 * Vitest global setup: builds the native addons (inotify, the walk, syncfs) when this checkout has not built it yet (a worktree made
 * without `npm ci`), so the watcher tests run the native watcher and the
 * scan tests the native walk and the file workers their syncfs, not the fallbacks. A no-op once built.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './cli.js';

export default function setup(): void {
  const built = ['boxsync_inotify.node', 'boxsync_walk.node', 'boxsync_syncfs.node'].every((f) => existsSync(join(repoRoot, 'build', 'Release', f)));
  if (process.platform !== 'linux' || built) return;
  spawnSync(process.execPath, [join(repoRoot, 'scripts', 'build-native.mjs')], { cwd: repoRoot, stdio: 'inherit' });
}
