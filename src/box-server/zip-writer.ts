/**
 * box-server's zip writer: the layout yazl wrote before (so every reader that took those archives takes these),
 * at a fraction of the CPU for archives of many small files.
 *
 * Layout, entry by entry, in the order the parts come:
 * - a file with content: local header (version 20, flags UTF-8 name | data descriptor, method 8 = deflate, CRC and
 *   sizes 0), its deflated bytes, a data descriptor with its signature (ZIP64 sizes when the entry needs them);
 * - an empty file: local header with method 0 (stored), flags UTF-8 name, CRC and sizes 0, no descriptor;
 * - a file handed over whole of under 512 bytes, or whose bytes do not compress (`incompressible`): local header with
 *   method 0, flags UTF-8 name, its CRC and sizes, its bytes as they are, no descriptor (what Info-ZIP writes for
 *   such a file, and what yazl's `addBuffer` with `compress: false` writes); a streamed file is always deflated;
 * - a folder `name/`: the same as an empty file;
 * - then the central directory (version made by 3.63 = Unix, version needed 20, or 45 with a ZIP64 extended field
 *   holding both sizes and the header offset when a size or the offset passes 0xfffffffe; an Info-ZIP "UT" field
 *   with the mtime in seconds; mode 0100664 for files, 040775 for folders) and the end record, preceded by the
 *   ZIP64 end record and locator from 65,535 entries on or when the directory's size or offset needs them.
 * Times are DOS times in local time, clamped to 1980-2107, as yazl wrote them.
 *
 * Small entries (bytes handed over whole, up to 64 KiB) are deflated with one `deflateRawSync` each, with a window
 * no bigger than the entry needs (the same output as level 6 with a 32 KiB window, at a fraction of the set-up), and
 * many of them go out in one chunk; a bigger one, or an entry given as a stream, is deflated as a stream, with
 * backpressure (the same bytes). The store-or-deflate decision is the writer's alone (`storedAsIs`). The archive is a
 * Readable: it makes the next chunk only when read, so a reader that stops reading holds it, and destroying it
 * stops it (and the entry stream it reads).
 */
import { Readable, Transform } from 'node:stream';
import zlib from 'node:zlib';

/** One entry of the archive: a folder, a file whose bytes are at hand, or a file streamed from `open()`. */
export type ZipPart =
  | { readonly kind: 'folder'; readonly path: string; readonly mtimeMs: number }
  | { readonly kind: 'bytes'; readonly path: string; readonly mtimeMs: number; readonly data: Buffer; readonly onWritten?: () => void }
  | { readonly kind: 'stream'; readonly path: string; readonly mtimeMs: number; readonly size: number; readonly open: () => Readable; readonly onWritten?: () => void };

/** Bytes of small entries gathered before they go out as one chunk. */
export const ZIP_BATCH_BYTES = 128 * 1024;

const LOCAL_HEADER = 30;
const CENTRAL_HEADER = 46;
const UT_FIELD = 9;
const ZIP64_FIELD = 28;
const DESCRIPTOR = 16;
const ZIP64_DESCRIPTOR = 24;
const EOCD = 22;
const ZIP64_EOCD = 56;
const ZIP64_LOCATOR = 20;
const FLAG_UTF8 = 1 << 11;
const FLAG_DESCRIPTOR = 1 << 3;
const VERSION_MADE_BY = (3 << 8) | 63;
const VERSION_NEEDED = 20;
const VERSION_NEEDED_ZIP64 = 45;
const FILE_ATTRS = (0o100664 << 16) >>> 0;
const FOLDER_ATTRS = (0o40775 << 16) >>> 0;
const LIMIT32 = 0xfffffffe;

/** What the central directory needs of one entry. */
interface CentralRec {
  readonly name: Buffer;
  readonly folder: boolean;
  readonly method: number;
  readonly flags: number;
  readonly dosTime: number;
  readonly dosDate: number;
  readonly unixSeconds: number;
  readonly crc: number;
  readonly compressed: number;
  readonly size: number;
  readonly offset: number;
}

const crc32: (data: Buffer, value?: number) => number = typeof zlib.crc32 === 'function' ? zlib.crc32 : crc32Js;

let crcTable: Uint32Array | null = null;
/** CRC-32 for a Node without `zlib.crc32` (before 20.15); exported for its test. */
export function crc32Js(data: Buffer, value = 0): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let c = (value ^ 0xffffffff) >>> 0;
  for (let i = 0; i < data.length; i++) c = crcTable[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** The entry's name as the archive holds it; throws for a name yazl refused (empty, absolute, `..`, a file ending in `/`). */
export function zipEntryName(path: string, folder: boolean): Buffer {
  if (path === '') throw new Error('empty zip entry name');
  let p = path.includes('\\') ? path.replace(/\\/g, '/') : path;
  if (p.startsWith('/') || (p.charCodeAt(1) === 58 && /^[a-zA-Z]:/.test(p))) throw new Error(`absolute zip entry name: ${p}`);
  if (p.includes('..') && p.split('/').includes('..')) throw new Error(`zip entry name with '..': ${p}`);
  if (folder) {
    if (!p.endsWith('/')) p += '/';
  } else if (p.endsWith('/')) {
    throw new Error(`file zip entry name ending in '/': ${p}`);
  }
  const name = Buffer.from(p, 'utf8');
  if (name.length > 0xffff) throw new Error(`zip entry name longer than 65,535 bytes`);
  return name;
}

const minDos = new Date(1980, 0, 1).getTime();
const maxDos = new Date(2107, 11, 31, 23, 59, 58).getTime();

/** DOS date and time, in local time (as yazl wrote them). */
function dosDateTime(ms: number): { date: number; time: number } {
  const d = new Date(Math.min(maxDos, Math.max(minDos, ms)));
  return {
    date: (d.getDate() & 0x1f) | (((d.getMonth() + 1) & 0xf) << 5) | (((d.getFullYear() - 1980) & 0x7f) << 9),
    time: Math.floor(d.getSeconds() / 2) | ((d.getMinutes() & 0x3f) << 5) | ((d.getHours() & 0x1f) << 11),
  };
}

function writeU64(buf: Buffer, n: number, at: number): void {
  buf.writeUInt32LE(n % 0x100000000, at);
  buf.writeUInt32LE(Math.floor(n / 0x100000000), at + 4);
}

/** Raw deflate at level 6 with the smallest window that still reaches every byte of `data` (the same output). */
function deflateSmall(data: Buffer): Buffer {
  const windowBits = Math.max(9, Math.min(15, Math.ceil(Math.log2(data.length + 262))));
  // An output buffer the size of the entry (zlib's default is 16 KiB a call, mostly garbage for a small entry).
  return zlib.deflateRawSync(data, { level: 6, windowBits, chunkSize: Math.max(64, data.length + 64) });
}

/**
 * Bytes entries smaller than this are stored: deflating one saves at most a few hundred bytes, and costs a zlib
 * stream set up and run for it, 10-15 us (measured: 20,000 deflateRawSync calls of 100-160 bytes, 290 ms), about a
 * quarter of box-server's CPU in a first mirror of 100,000 small files (profiled). Bigger ones are looked at for whether they compress.
 */
const STORE_BELOW_BYTES = 512;
const STORE_SAMPLE_BYTES = 1024;
/** Bytes entries up to this size are deflated in one call; bigger ones go through a deflate stream (no long call). */
const DEFLATE_WHOLE_MAX_BYTES = 64 * 1024;
const EMPTY = Buffer.alloc(0);

/**
 * Whether deflate would hardly shrink these bytes, judged as btrfs's compression heuristic judges: the Shannon
 * entropy of the bytes of a sample of their start (up to 1 KiB) of at least 7.5 bits a byte (random bytes: about
 * 7.6 at 512 bytes, 7.8 at 1 KiB; English text about 4.5). One pass over the sample and no zlib context: a level-1
 * deflate of the sample per file cost box-server more than the deflate it saved. A wrong guess costs compression
 * only, never bytes: both methods carry the same content.
 */
export function incompressible(data: Buffer): boolean {
  const n = Math.min(data.length, STORE_SAMPLE_BYTES);
  if (n === 0) return false;
  const counts = new Uint32Array(256);
  for (let i = 0; i < n; i++) counts[data[i]!]! += 1;
  let bits = 0;
  for (let b = 0; b < 256; b++) {
    const c = counts[b]!;
    if (c !== 0) bits -= c * Math.log2(c / n);
  }
  return bits / n >= 7.5;
}

/**
 * The writer's one store-or-deflate decision for bytes at hand: those under 512 bytes (empty ones too) and those that
 * do not compress go in as they are (method 0), the rest deflated. Folders are stored too; a streamed entry (its bytes
 * not at hand to look at) is always deflated. Exported for its test.
 */
export function storedAsIs(data: Buffer): boolean {
  return data.length < STORE_BELOW_BYTES || incompressible(data);
}

/** A bytes entry too big for one deflate call, as a streamed one. */
function streamOf(part: Extract<ZipPart, { kind: 'bytes' }>): Extract<ZipPart, { kind: 'stream' }> {
  const data = part.data;
  return { kind: 'stream', path: part.path, mtimeMs: part.mtimeMs, size: data.length, open: () => Readable.from([data], { objectMode: false }), onWritten: part.onWritten };
}

/** Counts and checksums what passes (the streamed entry's uncompressed side). */
class CrcCounter extends Transform {
  crc = 0;
  bytes = 0;
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null, data?: Buffer) => void): void {
    this.crc = crc32(chunk, this.crc);
    this.bytes += chunk.length;
    cb(null, chunk);
  }
}

export class ZipStream extends Readable {
  private readonly central: CentralRec[] = [];
  /** Bytes of the archive made so far (pushed or in the batch buffer): the next local header's offset. */
  private offset = 0;
  /** The batch buffer: bytes from `used` on are free. */
  private buf = Buffer.allocUnsafe(0);
  private used = 0;
  private dosStep = Number.NaN;
  private dosLast = { date: 0, time: 0 };
  /** The deflate stream of the entry being streamed, paused while the reader is full. */
  private current: { readonly source: Readable; readonly counter: CrcCounter; readonly deflate: zlib.DeflateRaw } | null = null;

  constructor(private readonly parts: Iterator<ZipPart>) {
    super();
  }

  override _read(): void {
    if (this.destroyed) return;
    if (this.current) {
      this.current.deflate.resume();
      return;
    }
    try {
      this.fill();
    } catch (e) {
      this.destroy(e as Error);
    }
  }

  override _destroy(err: Error | null, cb: (error?: Error | null) => void): void {
    const c = this.current;
    this.current = null;
    if (c) {
      c.source.destroy();
      c.counter.destroy();
      c.deflate.destroy();
    }
    try {
      this.parts.return?.();
    } catch {
      // the parts' own clean-up failed: the archive is ending anyway
    }
    cb(err);
  }

  /** Makes room for `n` more bytes in the batch buffer (pushing what it holds first when it is too small). */
  private room(n: number): void {
    if (this.buf.length - this.used >= n) return;
    this.pushBatch();
    this.buf = Buffer.allocUnsafe(Math.max(ZIP_BATCH_BYTES + 4096, n));
  }

  /** Pushes the batch buffer's bytes; the buffer's rest is kept for the next ones. */
  private pushBatch(): void {
    if (this.used === 0) return;
    this.push(this.buf.subarray(0, this.used));
    this.buf = this.buf.subarray(this.used);
    this.used = 0;
  }

  /** Pushes small entries up to about ZIP_BATCH_BYTES, up to the next streamed entry, or up to the archive's end. */
  private fill(): void {
    if (this.destroyed) return;
    const until = this.offset + ZIP_BATCH_BYTES;
    while (this.offset < until) {
      const next = this.parts.next();
      if (next.done) {
        this.pushBatch();
        this.push(this.centralDirectory(this.offset));
        this.push(null);
        return;
      }
      const part = next.value;
      const folder = part.kind === 'folder';
      const name = zipEntryName(part.path, folder);
      const { date, time } = this.dos(part.mtimeMs);
      const unixSeconds = Math.max(-0x80000000, Math.min(0x7fffffff, Math.floor(part.mtimeMs / 1000)));
      const stored = part.kind === 'folder' || (part.kind === 'bytes' && storedAsIs(part.data));
      const flags = stored ? FLAG_UTF8 : FLAG_UTF8 | FLAG_DESCRIPTOR;
      const method = stored ? 0 : 8;
      const rec = { name, folder, method, flags, dosTime: time, dosDate: date, unixSeconds, offset: this.offset };
      if (stored) {
        // As it is (folders and empty files: nothing): CRC and sizes in the local header, no descriptor.
        const data = part.kind === 'folder' ? EMPTY : part.data;
        const entry: CentralRec = { ...rec, crc: crc32(data), compressed: data.length, size: data.length };
        this.room(LOCAL_HEADER + name.length);
        this.localHeader(rec, entry);
        if (data.length > ZIP_BATCH_BYTES / 4) {
          this.pushBatch();
          this.push(data);
        } else if (data.length > 0) {
          this.room(data.length);
          this.used += data.copy(this.buf, this.used);
        }
        this.offset += data.length;
        this.central.push(entry);
        if (!folder) part.onWritten?.();
        continue;
      }
      if (part.kind === 'stream' || part.data.length > DEFLATE_WHOLE_MAX_BYTES) {
        this.room(LOCAL_HEADER + name.length);
        this.localHeader(rec);
        this.pushBatch();
        this.stream(part.kind === 'stream' ? part : streamOf(part), rec);
        return;
      }
      const crc = crc32(part.data);
      const deflated = deflateSmall(part.data);
      const entry: CentralRec = { ...rec, crc, compressed: deflated.length, size: part.data.length };
      this.room(LOCAL_HEADER + name.length + deflated.length + ZIP64_DESCRIPTOR);
      this.localHeader(rec);
      this.used += deflated.copy(this.buf, this.used);
      this.offset += deflated.length;
      this.descriptor(entry);
      this.central.push(entry);
      part.onWritten?.();
    }
    this.pushBatch();
  }

  /** DOS date and time of `ms`, remembered for the last 2-second step (files written together share it). */
  private dos(ms: number): { date: number; time: number } {
    const step = Math.floor(ms / 2000);
    if (step !== this.dosStep) {
      this.dosStep = step;
      this.dosLast = dosDateTime(ms);
    }
    return this.dosLast;
  }

  /** A local header into the batch buffer (room made): CRC and sizes 0 (they follow in the descriptor or are 0), or `known`'s. */
  private localHeader(e: Omit<CentralRec, 'crc' | 'compressed' | 'size'>, known?: CentralRec): void {
    const h = this.buf;
    const at = this.used;
    h.writeUInt32LE(0x04034b50, at);
    h.writeUInt16LE(VERSION_NEEDED, at + 4);
    h.writeUInt16LE(e.flags, at + 6);
    h.writeUInt16LE(e.method, at + 8);
    h.writeUInt16LE(e.dosTime, at + 10);
    h.writeUInt16LE(e.dosDate, at + 12);
    h.fill(0, at + 14, at + 26);
    if (known) {
      h.writeUInt32LE(known.crc, at + 14);
      h.writeUInt32LE(known.compressed, at + 18);
      h.writeUInt32LE(known.size, at + 22);
    }
    h.writeUInt16LE(e.name.length, at + 26);
    h.writeUInt16LE(0, at + 28);
    e.name.copy(h, at + LOCAL_HEADER);
    const n = LOCAL_HEADER + e.name.length;
    this.used += n;
    this.offset += n;
  }

  /** A data descriptor into the batch buffer (room made), with its signature; ZIP64 sizes when the entry needs them. */
  private descriptor(e: CentralRec): void {
    const d = this.buf;
    const at = this.used;
    const big = zip64(e);
    d.writeUInt32LE(0x08074b50, at);
    d.writeUInt32LE(e.crc, at + 4);
    if (big) {
      writeU64(d, e.compressed, at + 8);
      writeU64(d, e.size, at + 16);
    } else {
      d.writeUInt32LE(e.compressed, at + 8);
      d.writeUInt32LE(e.size, at + 12);
    }
    const n = big ? ZIP64_DESCRIPTOR : DESCRIPTOR;
    this.used += n;
    this.offset += n;
  }

  /** Streams one entry's bytes through a deflate stream, then its descriptor; then goes on with the next parts. */
  private stream(part: Extract<ZipPart, { kind: 'stream' }>, rec: Omit<CentralRec, 'crc' | 'compressed' | 'size'>): void {
    const source = part.open();
    const counter = new CrcCounter();
    const deflate = zlib.createDeflateRaw({ level: 6 });
    this.current = { source, counter, deflate };
    let compressed = 0;
    const fail = (e: Error): void => {
      if (this.current?.deflate === deflate) this.destroy(e);
    };
    source.on('error', fail);
    counter.on('error', fail);
    deflate.on('error', fail);
    source.pipe(counter).pipe(deflate);
    deflate.on('data', (chunk: Buffer) => {
      compressed += chunk.length;
      this.offset += chunk.length;
      if (!this.push(chunk)) deflate.pause();
    });
    deflate.on('end', () => {
      if (this.current?.deflate !== deflate) return;
      this.current = null;
      if (counter.bytes !== part.size) {
        this.destroy(new Error(`zip entry ${part.path}: ${counter.bytes} bytes read, ${part.size} expected`));
        return;
      }
      const entry: CentralRec = { ...rec, crc: counter.crc, compressed, size: counter.bytes };
      this.room(ZIP64_DESCRIPTOR);
      this.descriptor(entry);
      this.central.push(entry);
      part.onWritten?.();
      this._read();
    });
  }

  private centralDirectory(start: number): Buffer {
    let size = 0;
    for (const e of this.central) size += CENTRAL_HEADER + e.name.length + UT_FIELD + (zip64(e) ? ZIP64_FIELD : 0);
    const count = this.central.length;
    const needZip64 = count >= 0xffff || size >= 0xffffffff || start >= 0xffffffff;
    const out = Buffer.alloc(size + (needZip64 ? ZIP64_EOCD + ZIP64_LOCATOR : 0) + EOCD);
    let at = 0;
    for (const e of this.central) {
      const big = zip64(e);
      out.writeUInt32LE(0x02014b50, at);
      out.writeUInt16LE(VERSION_MADE_BY, at + 4);
      out.writeUInt16LE(big ? VERSION_NEEDED_ZIP64 : VERSION_NEEDED, at + 6);
      out.writeUInt16LE(e.flags, at + 8);
      out.writeUInt16LE(e.method, at + 10);
      out.writeUInt16LE(e.dosTime, at + 12);
      out.writeUInt16LE(e.dosDate, at + 14);
      out.writeUInt32LE(e.crc, at + 16);
      out.writeUInt32LE(big ? 0xffffffff : e.compressed, at + 20);
      out.writeUInt32LE(big ? 0xffffffff : e.size, at + 24);
      out.writeUInt16LE(e.name.length, at + 28);
      out.writeUInt16LE(UT_FIELD + (big ? ZIP64_FIELD : 0), at + 30);
      // comment length, disk number, internal attributes: 0 (the buffer is zeroed)
      out.writeUInt32LE(e.folder ? FOLDER_ATTRS : FILE_ATTRS, at + 38);
      out.writeUInt32LE(big ? 0xffffffff : e.offset, at + 42);
      at += CENTRAL_HEADER;
      at += e.name.copy(out, at);
      out.writeUInt16LE(0x5455, at);
      out.writeUInt16LE(UT_FIELD - 4, at + 2);
      out.writeUInt8(3, at + 4); // mtime and atime flags (only the mtime is in the central field), as Info-ZIP
      out.writeInt32LE(e.unixSeconds, at + 5);
      at += UT_FIELD;
      if (big) {
        out.writeUInt16LE(0x0001, at);
        out.writeUInt16LE(ZIP64_FIELD - 4, at + 2);
        writeU64(out, e.size, at + 4);
        writeU64(out, e.compressed, at + 12);
        writeU64(out, e.offset, at + 20);
        at += ZIP64_FIELD;
      }
    }
    if (needZip64) {
      const eocd64At = start + size;
      out.writeUInt32LE(0x06064b50, at);
      writeU64(out, ZIP64_EOCD - 12, at + 4);
      out.writeUInt16LE(VERSION_MADE_BY, at + 12);
      out.writeUInt16LE(VERSION_NEEDED_ZIP64, at + 14);
      writeU64(out, count, at + 24);
      writeU64(out, count, at + 32);
      writeU64(out, size, at + 40);
      writeU64(out, start, at + 48);
      at += ZIP64_EOCD;
      out.writeUInt32LE(0x07064b50, at);
      writeU64(out, eocd64At, at + 8);
      out.writeUInt32LE(1, at + 16);
      at += ZIP64_LOCATOR;
    }
    out.writeUInt32LE(0x06054b50, at);
    out.writeUInt16LE(needZip64 ? 0xffff : count, at + 8);
    out.writeUInt16LE(needZip64 ? 0xffff : count, at + 10);
    out.writeUInt32LE(needZip64 ? 0xffffffff : size, at + 12);
    out.writeUInt32LE(needZip64 ? 0xffffffff : start, at + 16);
    return out;
  }
}

function zip64(e: CentralRec): boolean {
  return e.size > LIMIT32 || e.compressed > LIMIT32 || e.offset > LIMIT32;
}
