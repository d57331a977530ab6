/**
 * Test harness for the Box adapter: a real box-server on port 0 and an adapter pointed at it.
 */
import { startBoxServer } from '../../../src/box-server/index.js';
import type { BoxServer, BoxServerOptions } from '../../../src/box-server/index.js';
import { isSyncError, type SyncError } from '../../../src/core/errors.js';
import type { UploadSessionRecord, UploadSessionStore } from '../../../src/ports/remote-store.js';
import { createBoxAdapter, type BoxAdapter } from '../../../src/remote/box/create-box-adapter.js';
import type { BoxAdapterOptions } from '../../../src/remote/box/options.js';

export const TOKEN = 'T';

export async function startServer(opts: BoxServerOptions = {}): Promise<BoxServer> {
  return startBoxServer({ port: 0, tokens: [TOKEN], ...opts });
}

export function adapterFor(server: BoxServer, opts: Partial<BoxAdapterOptions> = {}): BoxAdapter {
  return createBoxAdapter({
    apiUrl: server.apiUrl,
    uploadUrl: server.uploadUrl,
    tokenUrl: server.tokenUrl,
    auth: { developerToken: TOKEN },
    ...opts,
  });
}

/** The SyncError `p` rejects with; a resolved `p` or any other rejection fails the test. */
export async function syncFailure(p: Promise<unknown>): Promise<SyncError> {
  try {
    await p;
  } catch (e) {
    if (isSyncError(e)) return e;
    throw e;
  }
  throw new Error('expected a failure');
}

/** An UploadSessionStore in memory, shared between adapter instances the way the journal would be. */
export class MemorySessionStore implements UploadSessionStore {
  readonly records = new Map<string, UploadSessionRecord>();
  onAddPart: ((key: string, count: number) => void) | undefined;

  get(key: string): UploadSessionRecord | undefined {
    return this.records.get(key);
  }
  put(rec: UploadSessionRecord): void {
    this.records.set(rec.key, rec);
  }
  addPart(key: string, part: UploadSessionRecord['parts'][number]): void {
    const rec = this.records.get(key);
    if (!rec) return;
    const next = { ...rec, parts: [...rec.parts, part] };
    this.records.set(key, next);
    this.onAddPart?.(key, next.parts.length);
  }
  delete(key: string): void {
    this.records.delete(key);
  }
  list(): readonly UploadSessionRecord[] {
    return [...this.records.values()];
  }
}
