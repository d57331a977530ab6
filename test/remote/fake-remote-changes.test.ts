import { describe, expect, it } from 'vitest';
import { asRemoteId } from '../../src/core/model.js';
import { FakeRemoteStore } from '../support/fake-remote-store.js';

describe('FakeRemoteStore.changes', () => {
  it('reports each change after a position as a hint, in order', async () => {
    const fake = new FakeRemoteStore();
    const pos = await fake.changes.now('changes');
    const folder = fake.seedFolder(asRemoteId('0'), 'A');
    const file = fake.seedFile(folder.id, 'a.txt', 'a');
    await fake.move({ id: file.id, kind: 'file', name: 'b.txt' });
    await fake.trash(folder.id, 'folder');
    const batch = await fake.changes.fetch('changes', pos);
    expect(batch.hints.map((h) => [h.id, h.change])).toEqual([
      [folder.id, 'changed'],
      [file.id, 'changed'],
      [file.id, 'changed'],
      [folder.id, 'trashed'],
      [file.id, 'trashed'],
    ]);
    expect((await fake.changes.fetch('changes', batch.nextPosition)).hints).toEqual([]);
    await expect(fake.changes.fetch('changes', '999')).rejects.toMatchObject({ code: 'stream_position_invalid' });
  });

  it('wakes a waiting long poll on the next change, and times out without one', async () => {
    const fake = new FakeRemoteStore({ longPollTimeoutMs: 50 });
    const pos = await fake.changes.now('changes');
    expect(await fake.changes.waitForChange('changes', pos)).toBe('timeout');
    const waiting = fake.changes.waitForChange('changes', pos);
    fake.seedFolder(asRemoteId('0'), 'B');
    expect(await waiting).toBe('changed');
    const ctrl = new AbortController();
    const aborted = fake.changes.waitForChange('changes', await fake.changes.now('changes'), ctrl.signal);
    ctrl.abort();
    await expect(aborted).rejects.toMatchObject({ code: 'aborted' });
  });
});
