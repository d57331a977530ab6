/** The small key/value tables: meta, stream cursors, trashed remote ids. */
import type { Database, Statement } from 'better-sqlite3';
import type { RemoteId } from '../core/model.js';

export class KvTables {
  readonly #getMeta: Statement<[string], { value: string }>;
  readonly #setMeta: Statement<[string, string]>;
  readonly #getCursor: Statement<[string], { position: string }>;
  readonly #setCursor: Statement<[string, string]>;
  readonly #isTrashed: Statement<[string], { id: string }>;
  readonly #markTrashed: Statement<[string]>;
  readonly #unmarkTrashed: Statement<[string]>;

  constructor(db: Database) {
    this.#getMeta = db.prepare(`SELECT value FROM meta WHERE key = ?`);
    this.#setMeta = db.prepare(`INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)`);
    this.#getCursor = db.prepare(`SELECT position FROM stream_cursors WHERE name = ?`);
    this.#setCursor = db.prepare(`INSERT OR REPLACE INTO stream_cursors (name, position) VALUES (?, ?)`);
    this.#isTrashed = db.prepare(`SELECT id FROM trashed_remote_ids WHERE id = ?`);
    this.#markTrashed = db.prepare(`INSERT OR IGNORE INTO trashed_remote_ids (id) VALUES (?)`);
    this.#unmarkTrashed = db.prepare(`DELETE FROM trashed_remote_ids WHERE id = ?`);
  }

  getMeta(key: string): string | undefined {
    return this.#getMeta.get(key)?.value;
  }

  setMeta(key: string, value: string): void {
    this.#setMeta.run(key, value);
  }

  getCursor(name: string): string | undefined {
    return this.#getCursor.get(name)?.position;
  }

  setCursor(name: string, position: string): void {
    this.#setCursor.run(name, position);
  }

  markTrashed(id: RemoteId, trashed: boolean): void {
    if (trashed) this.#markTrashed.run(id);
    else this.#unmarkTrashed.run(id);
  }

  isTrashed(id: RemoteId): boolean {
    return this.#isTrashed.get(id) !== undefined;
  }
}
