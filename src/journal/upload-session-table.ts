/** UploadSessionStore over the upload_sessions and upload_session_parts tables. */
import type { Database, Statement } from 'better-sqlite3';
import type { UploadSessionRecord, UploadSessionStore } from '../ports/remote-store.js';

interface SessionRow {
  readonly key: string;
  readonly session_id: string;
  readonly endpoints_json: string;
  readonly part_size_bytes: number;
  readonly total_parts: number;
  readonly file_size_bytes: number;
  readonly source_sha1: string | null;
  readonly source_mtime_ms: number;
  readonly expires_at_ms: number;
  readonly file_id: string | null;
}

interface PartRow {
  readonly key: string;
  readonly offset: number;
  readonly part_id: string;
  readonly size_bytes: number;
  readonly sha1: string;
}

type Part = UploadSessionRecord['parts'][number];

const COLS = 'key, session_id, endpoints_json, part_size_bytes, total_parts, file_size_bytes, source_sha1, source_mtime_ms, expires_at_ms, file_id';

export class UploadSessionTable implements UploadSessionStore {
  readonly #get: Statement<[string], SessionRow>;
  readonly #all: Statement<[], SessionRow>;
  readonly #parts: Statement<[string], PartRow>;
  readonly #put: Statement<[SessionRow]>;
  readonly #deleteParts: Statement<[string]>;
  readonly #addPart: Statement<[PartRow]>;
  readonly #delete: Statement<[string]>;
  readonly #tx: (fn: () => void) => void;
  readonly #beforeWrite: () => void;

  /** `beforeWrite`: called before each write (the journal's first-write gate, first-write.ts). */
  constructor(db: Database, beforeWrite: () => void = () => undefined) {
    this.#beforeWrite = beforeWrite;
    this.#get = db.prepare(`SELECT ${COLS} FROM upload_sessions WHERE key = ?`);
    this.#all = db.prepare(`SELECT ${COLS} FROM upload_sessions ORDER BY key`);
    this.#parts = db.prepare(`SELECT key, offset, part_id, size_bytes, sha1 FROM upload_session_parts WHERE key = ? ORDER BY offset`);
    this.#put = db.prepare(
      `INSERT OR REPLACE INTO upload_sessions (${COLS})
       VALUES (@key, @session_id, @endpoints_json, @part_size_bytes, @total_parts, @file_size_bytes, @source_sha1,
               @source_mtime_ms, @expires_at_ms, @file_id)`,
    );
    this.#deleteParts = db.prepare(`DELETE FROM upload_session_parts WHERE key = ?`);
    this.#addPart = db.prepare(
      `INSERT OR REPLACE INTO upload_session_parts (key, offset, part_id, size_bytes, sha1) VALUES (@key, @offset, @part_id, @size_bytes, @sha1)`,
    );
    this.#delete = db.prepare(`DELETE FROM upload_sessions WHERE key = ?`);
    this.#tx = (fn) => db.transaction(fn)();
  }

  get(key: string): UploadSessionRecord | undefined {
    const r = this.#get.get(key);
    return r === undefined ? undefined : this.#fromRow(r);
  }

  /** Replaces the session stored under rec.key, parts included. */
  put(rec: UploadSessionRecord): void {
    this.#beforeWrite();
    this.#tx(() => {
      this.#deleteParts.run(rec.key);
      this.#put.run({
        key: rec.key,
        session_id: rec.sessionId,
        endpoints_json: JSON.stringify(rec.endpoints),
        part_size_bytes: rec.partSizeBytes,
        total_parts: rec.totalParts,
        file_size_bytes: rec.fileSizeBytes,
        source_sha1: rec.sourceSha1,
        source_mtime_ms: rec.sourceMtimeMs,
        expires_at_ms: Math.trunc(rec.expiresAtMs),
        file_id: rec.fileId,
      });
      for (const p of rec.parts) this.#insertPart(rec.key, p);
    });
  }

  /** Throws when no session is stored under `key` (a part without its session could never be committed). */
  addPart(key: string, part: Part): void {
    if (this.#get.get(key) === undefined) throw new Error(`no upload session stored under "${key}"; the part was not recorded`);
    this.#beforeWrite();
    this.#insertPart(key, part);
  }

  delete(key: string): void {
    this.#beforeWrite();
    this.#delete.run(key);
  }

  list(): readonly UploadSessionRecord[] {
    return this.#all.all().map((r) => this.#fromRow(r));
  }

  #insertPart(key: string, p: Part): void {
    this.#addPart.run({ key, offset: p.offset, part_id: p.partId, size_bytes: p.size, sha1: p.sha1 });
  }

  #fromRow(r: SessionRow): UploadSessionRecord {
    return {
      key: r.key,
      sessionId: r.session_id,
      endpoints: JSON.parse(r.endpoints_json) as Record<string, string>,
      partSizeBytes: r.part_size_bytes,
      totalParts: r.total_parts,
      fileSizeBytes: r.file_size_bytes,
      sourceSha1: r.source_sha1,
      sourceMtimeMs: r.source_mtime_ms,
      expiresAtMs: r.expires_at_ms,
      fileId: r.file_id,
      parts: this.#parts.all(r.key).map((p) => ({ partId: p.part_id, offset: p.offset, size: p.size_bytes, sha1: p.sha1 })),
    };
  }
}
