/**
 * An unprivileged user for tests that need a permission to be denied. Tests run as root, and root reads a mode-000
 * file; the CLI child runs as `nobody` (spawn's uid/gid) instead, over a temp dir given to that user. When no such
 * user can be had (not root, or spawn refuses), `skip` says why.
 */
import { spawnSync } from 'node:child_process';
import { lchownSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliEntry, repoRoot, type RunAs } from './cli.js';

function nobody(): RunAs {
  try {
    const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('nobody:'));
    const [, , uid, gid] = line?.split(':') ?? [];
    if (uid !== undefined && gid !== undefined) return { uid: Number(uid), gid: Number(gid) };
  } catch {
    // no /etc/passwd: the conventional ids below
  }
  return { uid: 65534, gid: 65534 };
}

/** The user to run the CLI as, or why there is none. */
export function unprivilegedUser(): { readonly as: RunAs } | { readonly skip: string } {
  if (process.getuid?.() !== 0) return { skip: `these tests need root to start the CLI as an unprivileged user (running as uid ${process.getuid?.()})` };
  const as = nobody();
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.getuid()))'], { uid: as.uid, gid: as.gid, encoding: 'utf8' });
  if (r.error !== undefined || r.stdout !== String(as.uid)) return { skip: `cannot start a process as uid ${as.uid} (nobody): ${r.error?.message ?? r.stderr}` };
  // The CLI child loads the sources and node_modules of this checkout: a checkout under a folder that user cannot
  // enter (a mode-700 temp dir, say) cannot run as that user at all.
  const read = spawnSync(process.execPath, ['-e', 'for (const p of process.argv.slice(1)) require("fs").accessSync(p, require("fs").constants.R_OK)', cliEntry, join(repoRoot, 'node_modules', 'tsx', 'package.json')], {
    uid: as.uid,
    gid: as.gid,
    encoding: 'utf8',
  });
  if (read.status !== 0) return { skip: `uid ${as.uid} (nobody) cannot read this checkout (${repoRoot}): a folder above it is closed to other users` };
  return { as };
}

/** chown -R, not following symlinks. */
export function giveTo(path: string, as: RunAs): void {
  lchownSync(path, as.uid, as.gid);
  if (!lstatSync(path).isDirectory()) return;
  for (const name of readdirSync(path)) giveTo(join(path, name), as);
}
