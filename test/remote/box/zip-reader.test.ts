/**
 * The scratch archive reader (src/remote/box/zip-reader.ts): yauzl over a file whose small reads come from a
 * chunk read ahead. Real archives written by yazl (box-server's zip writer) to a temp dir: a central directory
 * several chunks long (entries across chunk boundaries), ZIP64 records, entries streamed back with their CRC
 * checked, and a cut archive refused with its file closed.
 */
import { createWriteStream } from 'node:fs';
import { readdir, readFile, truncate, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type yauzl from 'yauzl';
import yazl from 'yazl';
import { openArchive } from '../../../src/remote/box/zip-reader.js';
import { makeTempDir } from '../../support/tmp.js';

let tmp: Awaited<ReturnType<typeof makeTempDir>> | undefined;
afterEach(async () => {
  await tmp?.cleanup();
  tmp = undefined;
});

const ENTRIES = 4000;
/** Names of about 110 bytes: a central directory of about 600 KB, more than two of the reader's 256 KiB chunks. */
const nameOf = (i: number): string => `folder-${i % 37}/${'long-name-'.repeat(9)}${i}.txt`;
const bodyOf = (i: number): Buffer => Buffer.from(`file ${i}\n`.repeat(1 + (i % 5)));

async function writeArchive(path: string): Promise<void> {
  const zip = new yazl.ZipFile();
  for (let i = 0; i < ENTRIES; i++) zip.addBuffer(bodyOf(i), nameOf(i), { forceZip64Format: i % 3 === 0, compress: i % 2 === 0 });
  zip.end();
  await pipeline(zip.outputStream, createWriteStream(path));
}

const openFds = async (): Promise<number> => (await readdir('/proc/self/fd')).length;

async function entriesOf(zip: yauzl.ZipFile): Promise<yauzl.Entry[]> {
  const out: yauzl.Entry[] = [];
  await new Promise<void>((resolve, reject) => {
    zip.on('error', reject);
    zip.on('end', () => resolve());
    zip.on('entry', (e: yauzl.Entry) => {
      out.push(e);
      zip.readEntry();
    });
    zip.readEntry();
  });
  return out;
}

async function bytesOf(zip: yauzl.ZipFile, e: yauzl.Entry): Promise<Buffer> {
  const s = await new Promise<NodeJS.ReadableStream>((resolve, reject) => zip.openReadStream(e, (err, r) => (err || !r ? reject(err) : resolve(r))));
  const chunks: Buffer[] = [];
  for await (const c of s) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

describe('zip-reader: yauzl over chunked reads of a scratch archive', () => {
  it('reads every entry of a central directory several chunks long, ZIP64 records included, and streams their bytes', async () => {
    tmp = await makeTempDir('boxsync-zip-reader-');
    const path = join(tmp.dir, 'a.zip');
    await writeArchive(path);
    const fds = await openFds();
    const zip = await openArchive(path);
    const entries = await entriesOf(zip);
    expect(entries.map((e) => e.fileName)).toEqual(Array.from({ length: ENTRIES }, (_, i) => nameOf(i)));
    for (const i of [0, 1, 2, 1499, 2500, 3333, ENTRIES - 1]) {
      expect(entries[i]!.uncompressedSize).toBe(bodyOf(i).length);
      expect(await bytesOf(zip, entries[i]!)).toEqual(bodyOf(i));
    }
    zip.close();
    // The archive's file is closed with the zip.
    await expect.poll(openFds, { timeout: 5000 }).toBe(fds);
  });

  it('a cut archive is refused, and its file is closed', async () => {
    tmp = await makeTempDir('boxsync-zip-reader-');
    const path = join(tmp.dir, 'cut.zip');
    await writeArchive(path);
    await truncate(path, Math.floor((await stat(path)).size / 2));
    const fds = await openFds();
    await expect(openArchive(path)).rejects.toThrow();
    expect(await openFds()).toBe(fds);
    // The bytes on disk are left alone (the caller removes its scratch file).
    expect((await readFile(path)).length).toBeGreaterThan(0);
  });
});
