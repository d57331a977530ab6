/**
 * `node --import tsx test/local/scan-as-user.ts ROOT`: one scan of ROOT by DiskLocalFs on node:fs, printed as JSON
 * (entries' paths and kinds, parked paths and codes). scan-native.test.ts runs it as an unprivileged user (root
 * reads any folder), with and without the native walk (BOXSYNC_WALK_ADDON).
 */
import * as nodeFs from 'node:fs';
import { join } from 'node:path';
import { createIgnoreMatcher } from '../../src/local/ignore.js';
import { createLocalFs } from '../../src/local/local-fs.js';
import { createLocalTrash } from '../../src/local/local-trash.js';
import { loadWalkAddon } from '../../src/local/walk-native.js';

const root = process.argv[2]!;
const local = createLocalFs({ rootPath: root, fs: nodeFs, trash: createLocalTrash({ mode: 'state', stateDir: join(root, '..', 'state'), fs: nodeFs }) });
const entries: [string, string][] = [];
const parked: [string, string][] = [];
for await (const b of local.scan({ isIgnored: createIgnoreMatcher([]), onUnreadable: (path, err) => parked.push([path, err.code]) })) {
  for (const e of b) entries.push([e.path, e.kind]);
}
process.stdout.write(JSON.stringify({ native: loadWalkAddon() !== null, entries, parked }));
