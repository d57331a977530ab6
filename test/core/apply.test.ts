import { describe, expect, it } from 'vitest';
import { Sim, p } from './plan-sim.js';

const root = new Sim().root.id;

describe('apply: the modelled outcome of each operation', () => {
  it('a local move relocates the base rows of the subtree and keeps content fields', () => {
    const sim = new Sim().seed({ d: null, 'd/f': 'F1' });
    const id = sim.remoteAt('d')!.id;
    const before = sim.world.synced.get(p('d/f'))!;
    sim.remoteMove('d', 'e');
    sim.remoteWrite('e/f', 'F2');
    sim.apply({ kind: 'local-move', root, remoteId: id, from: p('d'), to: p('e'), guard: { state: 'folder', inode: 0 }, reason: 'test' });
    expect([...sim.world.local.keys()].sort()).toEqual(['e', 'e/f']);
    expect([...sim.world.synced.keys()].sort()).toEqual(['e', 'e/f']);
    // The Box edit made before the move must still be visible against the base.
    expect(sim.world.synced.get(p('e/f'))).toMatchObject({ sha1: 'F1', etag: before.etag });
  });

  it('conflict-copy moves the local entry aside and drops the base row', () => {
    const sim = new Sim().seed({ a: 'A' });
    sim.apply({ kind: 'conflict-copy', root, path: p('a'), to: p('a (copy)'), guard: { state: 'absent' }, reason: 'test' });
    expect([...sim.world.local.keys()]).toEqual(['a (copy)']);
    expect(sim.world.synced.size).toBe(0);
  });

  it('refuses outcomes that could not have succeeded', () => {
    const sim = new Sim().seed({ a: 'A', b: 'B' });
    const a = sim.remoteAt('a')!;
    expect(() =>
      sim.apply({ kind: 'upload-version', root, path: p('a'), remoteId: a.id, ifMatch: 'stale', guard: { state: 'absent' }, reason: 'test' }),
    ).toThrow(/If-Match/);
    expect(() =>
      sim.apply({
        kind: 'download',
        root,
        path: p('b'),
        remoteId: a.id,
        expect: { etag: a.etag, sha1: a.sha1, sizeBytes: a.sizeBytes, versionId: a.versionId, modifiedAtMs: a.modifiedAtMs },
        guard: { state: 'absent' },
        reason: 'test',
      }),
    ).toThrow(/occupied/);
    expect(() =>
      sim.apply({ kind: 'local-move', root, remoteId: a.id, from: p('a'), to: p('a/inside'), guard: { state: 'absent' }, reason: 'test' }),
    ).toThrow(/into itself/);
  });

  it('upload-version keeps the previous Box version in the history', () => {
    const sim = new Sim().seed({ a: 'A' });
    const a = sim.remoteAt('a')!;
    sim.localWrite('a', 'A2');
    sim.apply({ kind: 'upload-version', root, path: p('a'), remoteId: a.id, ifMatch: a.etag, guard: { state: 'absent' }, reason: 'test' });
    expect(sim.world.remoteVersions.get(a.id)).toEqual(['A']);
    expect(sim.remoteAt('a')!.sha1).toBe('A2');
    expect(sim.world.synced.get(p('a'))).toMatchObject({ sha1: 'A2', etag: sim.remoteAt('a')!.etag });
  });
});
