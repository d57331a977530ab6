/**
 * The tree the profiling scripts mirror (profile-mirror.ts, rss-mirror.ts): FILES files of BYTES in all (sizes from
 * sync.bench.ts's fileSizes, seed 7) in FOLDERS folders `dir-N` under one folder NAME, seeded into a box-server of
 * this process started on port 0 with TOKEN.
 */
import { startBoxServer, type BoxServer } from '../../src/box-server/index.js';
import { content, fileSizes, prng } from './sync.bench.js';

export async function seedTree(opts: { files: number; folders: number; bytes: number; name: string; token: string }): Promise<{ srv: BoxServer; rootId: string }> {
  const srv = await startBoxServer({ port: 0, tokens: [opts.token] });
  const web = srv.control.as('1');
  const root = web.createFolder('0', opts.name);
  const sizes = fileSizes(opts.files, opts.bytes, prng(7));
  const per = Math.ceil(opts.files / opts.folders);
  let fid = root.id;
  for (let i = 0; i < opts.files; i++) {
    if (i % per === 0) fid = web.createFolder(root.id, `dir-${i / per}`).id;
    web.uploadFile(fid, `file-${i}.bin`, content(i, sizes[i]!));
  }
  return { srv, rootId: root.id };
}
