/** Sample content for the demo: a few folders, text files and one web link, owned by the default user. */
import { createFile } from './file-ops.js';
import { createFolder, createWebLink } from './item-ops.js';
import { defaultUserId, rootFolderId, type Store } from './store.js';

export function seedSample(store: Store): void {
  const ctx = { userId: defaultUserId, sessionId: 'sample' };
  const docs = createFolder(store, ctx, rootFolderId, 'Documents');
  const photos = createFolder(store, ctx, rootFolderId, 'Photos');
  const notes = createFolder(store, ctx, docs.id, 'Notes');
  const text = (s: string): Buffer => Buffer.from(s, 'utf8');
  createFile(store, ctx, rootFolderId, 'README.txt', store.blobs.writeBufferSync(text('Welcome to box-server sample content.\n')));
  createFile(store, ctx, docs.id, 'plan.md', store.blobs.writeBufferSync(text('# Plan\n\n- sync everything\n- lose nothing\n')));
  createFile(store, ctx, notes.id, 'monday.txt', store.blobs.writeBufferSync(text('Monday: call the plumber.\n')));
  createFile(store, ctx, notes.id, 'tuesday.txt', store.blobs.writeBufferSync(text('Tuesday: nothing planned.\n')));
  createFile(store, ctx, photos.id, 'caption.txt', store.blobs.writeBufferSync(text('A photo caption without a photo.\n')));
  createWebLink(store, ctx, rootFolderId, 'Box developer docs', 'https://developer.box.com/');
}
