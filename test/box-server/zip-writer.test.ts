/**
 * box-server's zip writer (src/box-server/zip-writer.ts): byte for byte the archive yazl wrote for the same entries
 * (so every reader that took box-server's archives before takes these), read back by the client's reader
 * (src/remote/box/zip-reader.ts, yauzl), `unzip -t` and Python's zipfile where the machine has them; ZIP64 records
 * from 65,535 entries on; a big entry streamed; entries that do not compress stored (method 0, sizes in the local
 * header); a short blob, a refused name and a reader going away.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import type yauzl from 'yauzl';
import yazl from 'yazl';
import { ZIP_BATCH_BYTES, ZipStream, crc32Js, incompressible, storedAsIs, zipEntryName, type ZipPart } from '../../src/box-server/zip-writer.js';
import { openArchive } from '../../src/remote/box/zip-reader.js';
import { makeTempDir } from '../support/tmp.js';

const execFileAsync = promisify(execFile);

let tmp: Awaited<ReturnType<typeof makeTempDir>> | undefined;
afterEach(async () => {
  await tmp?.cleanup();
  tmp = undefined;
});

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Pseudo-random bytes (incompressible) of `n`. */
function noise(n: number, seed: number): Buffer {
  const b = Buffer.alloc(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = x & 0xff;
  }
  return b;
}

interface Spec {
  readonly path: string;
  readonly mtimeMs: number;
  /** null: a folder. */
  readonly data: Buffer | null;
}

const t0 = Date.parse('2024-05-06T07:08:10Z');
const specs: Spec[] = [
  { path: 'top/', mtimeMs: t0, data: null },
  { path: 'top/one byte.txt', mtimeMs: t0 + 1000, data: Buffer.from('x') },
  { path: 'top/line.txt', mtimeMs: t0 + 3000, data: Buffer.from('file content 17 '.repeat(8)) },
  { path: 'top/empty.bin', mtimeMs: t0, data: Buffer.alloc(0) },
  { path: 'top/Übersicht – 日本語.md', mtimeMs: t0 - 86_400_000 * 400, data: Buffer.from('# ünïcødé\n'.repeat(300)) },
  { path: 'top/sub/', mtimeMs: Date.parse('1975-01-01T00:00:00Z'), data: null },
  { path: 'top/sub/noise.bin', mtimeMs: Date.parse('1975-01-01T00:00:00Z'), data: noise(60_000, 7) },
  { path: 'top/sub/text-64k.txt', mtimeMs: Date.parse('2099-12-31T23:59:59Z'), data: Buffer.from('0123456789abcdef'.repeat(4096)) },
];

function partsOf(list: readonly Spec[], streamed: (s: Spec) => boolean): ZipPart[] {
  return list.map((s): ZipPart => {
    if (s.data === null) return { kind: 'folder', path: s.path, mtimeMs: s.mtimeMs };
    const data = s.data;
    if (streamed(s) && data.length > 0) return { kind: 'stream', path: s.path, mtimeMs: s.mtimeMs, size: data.length, open: () => Readable.from([data.subarray(0, 1000), data.subarray(1000)]) };
    return { kind: 'bytes', path: s.path, mtimeMs: s.mtimeMs, data };
  });
}

/**
 * The archive zip-downloads.ts made with yazl before: folders and empty files stored, the rest streamed and deflated;
 * `stored` picks the files that go in as they are (yazl's `addBuffer` with `compress: false`: CRC and sizes in the
 * local header, no descriptor).
 */
async function yazlArchive(list: readonly Spec[], stored: (data: Buffer) => boolean): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const s of list) {
    const mtime = new Date(s.mtimeMs);
    if (s.data === null) zip.addEmptyDirectory(s.path, { mtime });
    else if (s.data.length === 0 || stored(s.data)) zip.addBuffer(s.data, s.path, { mtime, compress: false });
    else {
      const data = s.data;
      zip.addReadStreamLazy(s.path, { mtime, size: data.length, compress: true }, (cb) => cb(null, Readable.from([data])));
    }
  }
  zip.end();
  return collect(zip.outputStream as Readable);
}

async function entriesOf(zip: yauzl.ZipFile): Promise<Array<{ name: string; data: Buffer; mtime: Date; method: number }>> {
  const out: Array<{ name: string; data: Buffer; mtime: Date; method: number }> = [];
  await new Promise<void>((resolve, reject) => {
    zip.on('error', reject);
    zip.on('end', () => resolve());
    zip.on('entry', (entry: yauzl.Entry) => {
      zip.openReadStream(entry, (err, stream) => {
        if (err || !stream) return reject(err ?? new Error('no stream'));
        collect(stream).then((data) => {
          out.push({ name: entry.fileName, data, mtime: entry.getLastModDate(), method: entry.compressionMethod });
          zip.readEntry();
        }, reject);
      });
    });
    zip.readEntry();
  });
  zip.close();
  return out;
}

/** Every entry's name, sizes and CRC, from the central directory only. */
async function directoryOf(zip: yauzl.ZipFile): Promise<Array<{ name: string; size: number; crc: number }>> {
  const out: Array<{ name: string; size: number; crc: number }> = [];
  await new Promise<void>((resolve, reject) => {
    zip.on('error', reject);
    zip.on('end', () => resolve());
    zip.on('entry', (entry: yauzl.Entry) => {
      out.push({ name: entry.fileName, size: entry.uncompressedSize, crc: entry.crc32 });
      zip.readEntry();
    });
    zip.readEntry();
  });
  zip.close();
  return out;
}

const hasUnzip = existsSync('/usr/bin/unzip');

async function hasPython(): Promise<boolean> {
  try {
    await execFileAsync('python3', ['-c', 'import zipfile']);
    return true;
  } catch {
    return false;
  }
}

/** Python's zipfile: each entry's name and size, after testzip() checked every CRC. */
const pyCheck = `
import sys, zipfile, json
z = zipfile.ZipFile(sys.argv[1])
bad = z.testzip()
print(json.dumps({"bad": bad, "count": len(z.infolist()), "first": [[i.filename, i.file_size, i.compress_type] for i in z.infolist()[:20]]}))
`;

describe('box-server zip writer', () => {
  it('writes, byte for byte, the archive yazl wrote for the same entries, whole or streamed', async () => {
    // Handed over whole, the files under 512 bytes and the 60,000 random bytes of noise.bin go in stored (the
    // writer's decision); the rest deflated.
    expect(specs.filter((s) => s.data !== null && s.data.length > 0 && storedAsIs(s.data)).map((s) => s.path)).toEqual(['top/one byte.txt', 'top/line.txt', 'top/sub/noise.bin']);
    const whole = await yazlArchive(specs, storedAsIs);
    expect((await collect(new ZipStream(partsOf(specs, () => false)[Symbol.iterator]()))).equals(whole)).toBe(true);
    // Streamed, every file with content is deflated: yazl's own archive for these entries.
    const streamed = await yazlArchive(specs, () => false);
    expect((await collect(new ZipStream(partsOf(specs, () => true)[Symbol.iterator]()))).equals(streamed)).toBe(true);
  });

  it('is read back by the client reader, unzip -t and Python zipfile, with a big entry streamed', async () => {
    tmp = await makeTempDir('zip-writer-');
    const big = Buffer.concat([noise(3 * 1024 * 1024, 3), Buffer.from('compressible '.repeat(300_000))]);
    const list: Spec[] = [...specs, { path: 'top/big.bin', mtimeMs: t0, data: big }];
    // Many small entries around the big one: several batches before and after it.
    for (let i = 0; i < 3000; i++) list.push({ path: `top/many/f-${i}.txt`, mtimeMs: t0, data: Buffer.from(`small ${i}\n`.repeat(1 + (i % 7))) });
    // Every file, streamed or whole, is reported written once its bytes are in the archive (the status's count).
    let written = 0;
    const parts = partsOf(list, (s) => s.data === big).map((p): ZipPart => (p.kind === 'folder' ? p : { ...p, onWritten: () => (written += 1) }));
    const archive = await collect(new ZipStream(parts[Symbol.iterator]()));
    expect(written).toBe(list.filter((s) => s.data !== null).length);
    expect(archive.length).toBeGreaterThan(ZIP_BATCH_BYTES * 4);
    const path = join(tmp.dir, 'a.zip');
    await writeFile(path, archive);

    const entries = await entriesOf(await openArchive(path));
    expect(entries.map((e) => e.name)).toEqual(list.map((s) => s.path));
    for (const [i, e] of entries.entries()) {
      const s = list[i]!;
      expect(e.data.equals(s.data ?? Buffer.alloc(0)), s.path).toBe(true);
      // Stored: folders, files under 512 bytes, and the random bytes handed over whole (noise.bin); the streamed
      // big.bin deflated.
      expect(e.method, s.path).toBe(s.data === null || (s.data !== big && storedAsIs(s.data)) ? 0 : 8);
    }
    // DOS time: 2-second resolution, read back in local time as written.
    expect(Math.abs(entries[2]!.mtime.getTime() - list[2]!.mtimeMs)).toBeLessThanOrEqual(2000);

    if (hasUnzip) {
      const { stdout } = await execFileAsync('unzip', ['-t', path], { maxBuffer: 64 * 1024 * 1024 });
      expect(stdout).toContain('No errors detected');
    }
    if (await hasPython()) {
      const { stdout } = await execFileAsync('python3', ['-c', pyCheck, path], { maxBuffer: 16 * 1024 * 1024 });
      const r = JSON.parse(stdout) as { bad: string | null; count: number; first: Array<[string, number, number]> };
      expect(r.bad).toBeNull();
      expect(r.count).toBe(list.length);
      expect(r.first[1]).toEqual(['top/one byte.txt', 1, 0]);
      expect(r.first[4]).toEqual(['top/Übersicht – 日本語.md', 4200, 8]);
      expect(r.first[3]).toEqual(['top/empty.bin', 0, 0]);
    }
  });

  it('writes ZIP64 end records from 65,535 entries on, and every reader counts all entries', async () => {
    tmp = await makeTempDir('zip-writer-');
    const count = 70_000;
    function* parts(): Generator<ZipPart> {
      for (let i = 0; i < count; i++) {
        if (i % 1000 === 0) yield { kind: 'folder', path: `d${i / 1000}`, mtimeMs: t0 };
        else yield { kind: 'bytes', path: `d${Math.floor(i / 1000)}/${i}`, mtimeMs: t0, data: i % 2 === 0 ? Buffer.alloc(0) : Buffer.from([i & 0xff]) };
      }
    }
    const archive = await collect(new ZipStream(parts()));
    // End of central directory: entry counts 0xffff, pointing to the ZIP64 record through the locator before it.
    const eocd = archive.length - 22;
    expect(archive.readUInt32LE(eocd)).toBe(0x06054b50);
    expect(archive.readUInt16LE(eocd + 10)).toBe(0xffff);
    expect(archive.readUInt32LE(eocd - 20)).toBe(0x07064b50);
    const zip64At = Number(archive.readBigUInt64LE(eocd - 20 + 8));
    expect(archive.readUInt32LE(zip64At)).toBe(0x06064b50);
    expect(Number(archive.readBigUInt64LE(zip64At + 32))).toBe(count);
    const path = join(tmp.dir, 'many.zip');
    await writeFile(path, archive);

    const zip = await openArchive(path);
    expect(zip.entryCount).toBe(count);
    const entries = await directoryOf(zip);
    expect(entries).toHaveLength(count);
    expect(entries[0]).toEqual({ name: 'd0/', size: 0, crc: 0 });
    expect(entries[1]).toEqual({ name: 'd0/1', size: 1, crc: 0xa505df1b });
    expect(entries[69_999]).toEqual({ name: 'd69/69999', size: 1, crc: expect.any(Number) });

    if (hasUnzip) {
      const { stdout } = await execFileAsync('unzip', ['-t', '-q', path], { maxBuffer: 64 * 1024 * 1024 });
      expect(stdout).toContain('No errors detected');
    }
    if (await hasPython()) {
      const { stdout } = await execFileAsync('python3', ['-c', pyCheck, path], { maxBuffer: 16 * 1024 * 1024 });
      expect(JSON.parse(stdout)).toMatchObject({ bad: null, count });
    }
  });

  it('the CRC-32 for a Node without zlib.crc32 gives the same values, whole and in pieces', () => {
    const data = Buffer.concat([noise(100_000, 11), Buffer.from('tail')]);
    expect(crc32Js(Buffer.alloc(0))).toBe(0);
    expect(crc32Js(Buffer.from('123456789'))).toBe(0xcbf43926);
    expect(crc32Js(data)).toBe(zlib.crc32(data));
    expect(crc32Js(data.subarray(50_001), crc32Js(data.subarray(0, 50_001)))).toBe(zlib.crc32(data));
  });

  it('fails the archive when a streamed blob is shorter than its size, or a name is refused', async () => {
    const short = new ZipStream(
      [
        { kind: 'bytes', path: 'a.txt', mtimeMs: t0, data: Buffer.from('a') },
        { kind: 'stream', path: 'b.bin', mtimeMs: t0, size: 100_000, open: () => Readable.from([Buffer.alloc(99_999)]) },
      ][Symbol.iterator]() as Iterator<ZipPart>,
    );
    await expect(collect(short)).rejects.toThrow(/b\.bin: 99999 bytes read, 100000 expected/);

    for (const bad of ['../up.txt', '/abs.txt', 'C:/x.txt', '', 'dir/']) expect(() => zipEntryName(bad, false), bad).toThrow();
    expect(zipEntryName('a\\b.txt', false).toString()).toBe('a/b.txt');
    expect(zipEntryName('folder', true).toString()).toBe('folder/');
    const refused = new ZipStream([{ kind: 'bytes', path: 'ok.txt', mtimeMs: t0, data: Buffer.from('ok') }, { kind: 'bytes', path: 'a/../../etc/passwd', mtimeMs: t0, data: Buffer.from('x') }][Symbol.iterator]() as Iterator<ZipPart>);
    await expect(collect(refused)).rejects.toThrow(/'\.\.'/);
  });

  it('a reader that goes away stops the archive: the streamed blob is closed and no further entry is made', async () => {
    let made = 0;
    const source = new PassThrough();
    source.write(noise(1024 * 1024, 5));
    function* parts(): Generator<ZipPart> {
      made += 1;
      yield { kind: 'stream', path: 'big.bin', mtimeMs: t0, size: 10 * 1024 * 1024, open: () => source };
      made += 1;
      yield { kind: 'bytes', path: 'after.txt', mtimeMs: t0, data: Buffer.from('after') };
    }
    const zip = new ZipStream(parts());
    const first = await new Promise<Buffer>((resolve) => zip.once('data', resolve));
    expect(first.readUInt32LE(0)).toBe(0x04034b50);
    zip.destroy();
    await new Promise<void>((resolve) => (source.destroyed ? resolve() : source.once('close', () => resolve())));
    expect(source.destroyed).toBe(true);
    expect(made).toBe(1);
  });

  it('stores what does not compress (method 0, CRC and sizes in the local header): every reader takes it, amid deflated entries', async () => {
    tmp = await makeTempDir('zip-writer-');
    const random = noise(300 * 1024, 21);
    const text = Buffer.from('a line that compresses well\n'.repeat(8000));
    // The writer's judge: random bytes do not compress, text does, and only the sample at the start is looked at.
    expect(incompressible(random)).toBe(true);
    expect(incompressible(noise(70 * 1024, 5))).toBe(true);
    expect(incompressible(text)).toBe(false);
    expect(incompressible(Buffer.concat([Buffer.alloc(20 * 1024), random]))).toBe(false);
    // Every entry is handed over whole, with no word on its method: the writer decides.
    const list: Array<{ path: string; data: Buffer; store: boolean }> = [
      { path: 'a/small-random.bin', data: noise(5000, 7), store: true }, // copied into the batch
      { path: 'a/text.txt', data: Buffer.from('deflated between stored ones\n'.repeat(50)), store: false },
      { path: 'a/big-random.bin', data: random, store: true }, // pushed as it is
      { path: 'a/tiny-random.bin', data: noise(511, 9), store: true }, // under 512 bytes: stored, whatever the bytes
      { path: 'a/one.bin', data: Buffer.from([7]), store: true },
      { path: 'a/text-511.txt', data: Buffer.from('x'.repeat(511)), store: true },
      { path: 'a/text-512.txt', data: Buffer.from('x'.repeat(512)), store: false }, // from 512 bytes on, text is deflated
      { path: 'a/last.txt', data: text, store: false }, // over 64 KiB: through a deflate stream
    ];
    let written = 0;
    const parts = list.map((e): ZipPart => ({ kind: 'bytes', path: e.path, mtimeMs: t0, data: e.data, onWritten: () => (written += 1) }));
    const archive = await collect(new ZipStream(parts[Symbol.iterator]()));
    expect(written).toBe(list.length);
    // The stored entry's local header holds its CRC and sizes, with no descriptor flag; its bytes follow as they are.
    const at = archive.indexOf(Buffer.from('a/big-random.bin')) - 30;
    expect(archive.readUInt32LE(at)).toBe(0x04034b50);
    expect(archive.readUInt16LE(at + 6) & 8).toBe(0);
    expect(archive.readUInt16LE(at + 8)).toBe(0);
    expect(archive.readUInt32LE(at + 14)).toBe(crc32Js(random));
    expect(archive.readUInt32LE(at + 18)).toBe(random.length);
    expect(archive.readUInt32LE(at + 22)).toBe(random.length);
    expect(archive.subarray(at + 30 + 16, at + 30 + 16 + random.length).equals(random)).toBe(true);

    const path = join(tmp.dir, 'stored.zip');
    await writeFile(path, archive);
    const entries = await entriesOf(await openArchive(path));
    expect(entries.map((e) => [e.name, e.method])).toEqual(list.map((e) => [e.path, e.store ? 0 : 8]));
    for (const [i, e] of entries.entries()) expect(e.data.equals(list[i]!.data), e.name).toBe(true);
    if (hasUnzip) {
      const { stdout } = await execFileAsync('unzip', ['-t', path]);
      expect(stdout).toContain('No errors detected');
    }
    if (await hasPython()) {
      const { stdout } = await execFileAsync('python3', ['-c', pyCheck, path]);
      const r = JSON.parse(stdout) as { bad: string | null; count: number; first: Array<[string, number, number]> };
      expect(r.bad).toBeNull();
      expect(r.first.map((f) => f[2])).toEqual(list.map((e) => (e.store ? 0 : 8)));
    }
  });
});
