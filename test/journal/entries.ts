/** Small builders for journal tests. */
import { asRelPath, asRemoteId, type LocalEntry, type RemoteEntry, type SyncedEntry } from '../../src/core/model.js';

export const localFile = (path: string, over: Partial<LocalEntry> = {}): LocalEntry => ({
  path: asRelPath(path),
  kind: 'file',
  inode: 1000,
  sizeBytes: 10,
  mtimeMs: 1_700_000_000_123.5,
  sha1: 'da39a3ee5e6b4b0d3255bfef95601890afd80709',
  ...over,
});

export const localFolder = (path: string, inode: number): LocalEntry => ({
  path: asRelPath(path),
  kind: 'folder',
  inode,
  sizeBytes: 0,
  mtimeMs: 1_700_000_000_000,
  sha1: null,
});

export const remoteItem = (id: string, parentId: string | null, name: string, over: Partial<RemoteEntry> = {}): RemoteEntry => ({
  id: asRemoteId(id),
  kind: 'file',
  parentId: parentId === null ? null : asRemoteId(parentId),
  name,
  etag: '0',
  sequenceId: '0',
  sha1: null,
  sizeBytes: 0,
  modifiedAtMs: 1_700_000_000_000,
  versionId: null,
  url: null,
  status: 'active',
  ...over,
});

export const synced = (path: string, remoteId: string, over: Partial<SyncedEntry> = {}): SyncedEntry => ({
  path: asRelPath(path),
  remoteId: asRemoteId(remoteId),
  kind: 'file',
  etag: '1',
  sha1: 'aa',
  versionId: 'v1',
  sizeBytes: 5,
  inode: 42,
  mtimeMs: 1_700_000_000_000,
  url: null,
  ...over,
});
