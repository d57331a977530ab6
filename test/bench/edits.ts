/**
 * The edits the bench times a `sync --once` after (compare.bench.ts's edit row, profile-journal.ts): `perSide`
 * files changed on Box (a new version of each, from the first folders of the root) and `perSide` files changed
 * in the mirror (bytes appended to an existing file, one per folder from the last folders back), so that both
 * ends of the tree hold changes.
 */
import { appendFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { BoxServer } from '../../src/box-server/index.js';

/** `round` (0 the first time) keeps a later round's bytes unlike an earlier one's, so that they are transferred again. */
export async function editBothSides(srv: BoxServer, rootId: string, mirror: string, perSide: number, round = 0): Promise<void> {
  const web = srv.control.as('1');
  const dirs = web.listFolder(rootId).filter((e) => e.type === 'folder');
  let remote = 0;
  for (const d of dirs) {
    for (const f of web.listFolder(d.id)) {
      if (remote >= perSide || f.type !== 'file') break;
      web.uploadVersion(f.id, Buffer.from(`remote edit ${remote}${round === 0 ? '' : ` (round ${round})`}`));
      remote++;
    }
    if (remote >= perSide) break;
  }
  for (let i = 0; i < perSide; i++) {
    const dir = join(mirror, dirs[dirs.length - 1 - (i % dirs.length)]!.name);
    const names = (await readdir(dir)).sort();
    // With fewer folders than edits, the next file of the folder.
    const name = names[Math.floor(i / dirs.length) % names.length]!;
    await appendFile(join(dir, name), ` local edit ${i}`);
  }
}
