#!/usr/bin/env node
/**
 * Builds the native addons with node-gyp (every target of binding.gyp): the inotify watcher (native/inotify.c ->
 * build/Release/boxsync_inotify.node), the tree walk (native/walk.c -> build/Release/boxsync_walk.node) and the
 * file workers' durability point (native/syncfs.c -> build/Release/boxsync_syncfs.node). The
 * root package's `install` script, so a fresh `npm ci` builds them. Linux only. Never fails the install: without
 * the inotify addon the daemon uses the fs.watch-per-folder watcher ('dirs') and says so once in its log (README
 * "Daemon"); without the walk's, the scan reads folders through node:fs; without syncfs's, each file is fsynced.
 *
 * node-gyp comes from npm itself (npm sets npm_config_node_gyp for scripts), else from npm's own install.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function nodeGyp() {
  const fromNpm = process.env.npm_config_node_gyp;
  if (fromNpm && existsSync(fromNpm)) return fromNpm;
  const npmCli = process.env.npm_execpath;
  const candidates = [
    npmCli && join(dirname(npmCli), '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
    join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
  ];
  return candidates.find((c) => c && existsSync(c)) ?? null;
}

if (process.platform !== 'linux') {
  console.log('boxsync: not Linux, the native inotify watcher is not built (the daemon uses its portable watcher)');
  process.exit(0);
}
const gyp = nodeGyp();
if (!gyp) {
  console.warn('boxsync: node-gyp not found; the native inotify watcher is not built (the daemon falls back to its fs.watch watcher)');
  process.exit(0);
}
// Node's own headers when they are installed beside it (a distribution's node): no download. npm passes its
// `nodedir` setting itself (npm_config_nodedir), which node-gyp reads.
const prefix = join(dirname(process.execPath), '..');
const localHeaders = !process.env.npm_config_nodedir && existsSync(join(prefix, 'include', 'node', 'node_api.h'));
const args = [gyp, 'rebuild', ...(localHeaders ? [`--nodedir=${prefix}`] : [])];
const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
if (r.status !== 0) {
  console.warn(`boxsync: building the native inotify watcher failed (${r.error?.message ?? `exit ${r.status}`}); the daemon falls back to its fs.watch watcher`);
}
process.exit(0);
