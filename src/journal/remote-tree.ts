/** The remote tree table, keyed by Box id; subtrees are walked through the parent_id index. */
import type { Database, Statement } from 'better-sqlite3';
import type { RemoteEntry, RemoteId } from '../core/model.js';
import { remoteToRow, type RemoteRow } from './rows.js';
import { PAGE_ROWS } from './subtree.js';

const COLS = 'id, kind, parent_id, name, etag, sequence_id, sha1, size_bytes, modified_at_ms, version_id, url, status';
/** The same columns named as RemoteEntry names its fields: a row read is the entry itself (no second object a row). */
const ENTRY_COLS =
  'id, kind, parent_id AS parentId, name, etag, sequence_id AS sequenceId, sha1, size_bytes AS sizeBytes, modified_at_ms AS modifiedAtMs, version_id AS versionId, url, status';

export class RemoteTree {
  readonly #get: Statement<[string], RemoteEntry>;
  readonly #children: Statement<[string], RemoteEntry>;
  readonly #childrenPage: Statement<[string, string, string, number], RemoteEntry>;
  readonly #childNamed: Statement<[string, string], RemoteEntry>;
  readonly #put: Statement<[RemoteRow]>;
  readonly #delete: Statement<[string]>;
  readonly #deleteSubtree: Statement<[string]>;
  readonly #countBelow: Statement<[string, number], { n: number }>;

  constructor(db: Database) {
    this.#get = db.prepare(`SELECT ${ENTRY_COLS} FROM remote_items WHERE id = ?`);
    this.#children = db.prepare(`SELECT ${ENTRY_COLS} FROM remote_items WHERE parent_id = ? ORDER BY name`);
    // Keyset pages in the index's own order: (parent_id, name) with the primary key id after it (WITHOUT ROWID).
    this.#childrenPage = db.prepare(`SELECT ${ENTRY_COLS} FROM remote_items INDEXED BY remote_items_parent WHERE parent_id = ? AND (name, id) > (?, ?) ORDER BY name, id LIMIT ?`);
    // Same index and order as #children, so it finds the row children().find(by name) would.
    this.#childNamed = db.prepare(`SELECT ${ENTRY_COLS} FROM remote_items INDEXED BY remote_items_parent WHERE parent_id = ? AND name = ? LIMIT 1`);
    this.#put = db.prepare(
      `INSERT OR REPLACE INTO remote_items (${COLS})
       VALUES (@id, @kind, @parent_id, @name, @etag, @sequence_id, @sha1, @size_bytes, @modified_at_ms, @version_id, @url, @status)`,
    );
    this.#delete = db.prepare(`DELETE FROM remote_items WHERE id = ?`);
    // UNION (not UNION ALL) so that a parent cycle in bad data still terminates.
    this.#deleteSubtree = db.prepare(
      `WITH RECURSIVE below(id) AS (
         SELECT id FROM remote_items WHERE parent_id = ?
         UNION SELECT r.id FROM remote_items r JOIN below b ON r.parent_id = b.id)
       DELETE FROM remote_items WHERE id IN below`,
    );
    // The LIMIT inside the recursive query stops the walk itself once `limit` rows were found.
    this.#countBelow = db.prepare(
      `WITH RECURSIVE below(id) AS (
         SELECT id FROM remote_items WHERE parent_id = ?
         UNION SELECT r.id FROM remote_items r JOIN below b ON r.parent_id = b.id
         LIMIT ?)
       SELECT count(*) AS n FROM below`,
    );
  }

  countBelow(id: RemoteId, limit: number): number {
    return this.#countBelow.get(id, limit)?.n ?? 0;
  }

  get(id: RemoteId): RemoteEntry | undefined {
    return this.#get.get(id);
  }

  /** The children by name in keyset pages of PAGE_ROWS: bounded memory and time per step, however big the folder. */
  *childrenPaged(parentId: RemoteId): Generator<RemoteEntry> {
    let after = { name: '', id: '' };
    for (;;) {
      const page = this.#childrenPage.all(parentId, after.name, after.id, PAGE_ROWS);
      yield* page;
      const last = page[page.length - 1];
      if (last === undefined || page.length < PAGE_ROWS) return;
      after = { name: last.name, id: last.id };
    }
  }

  children(parentId: RemoteId): readonly RemoteEntry[] {
    return this.#children.all(parentId);
  }

  childNamed(parentId: RemoteId, name: string): RemoteEntry | undefined {
    return this.#childNamed.get(parentId, name);
  }

  put(e: RemoteEntry): void {
    this.#put.run(remoteToRow(e));
  }

  delete(id: RemoteId): void {
    this.#delete.run(id);
  }

  deleteSubtree(id: RemoteId): void {
    this.#deleteSubtree.run(id);
  }
}
