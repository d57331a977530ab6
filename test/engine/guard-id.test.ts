import { describe, expect, it } from 'vitest';
import { asRootId } from '../../src/core/model.js';
import { guardIdText, parseGuardId, type GuardId } from '../../src/engine/guard-id.js';

describe('guard ids: one spelling, read back exactly', () => {
  const root = asRootId('952003ac78fb1ea6');
  it.each<GuardId>([
    { kind: 'mass-delete', root, deletes: 120 },
    { kind: 'remote-root-missing', root },
    { kind: 'remote-root-empty', root },
    { kind: 'local-root-missing', root },
    { kind: 'local-root-empty', root },
  ])('%o round-trips', (g) => {
    expect(parseGuardId(guardIdText(g))).toEqual(g);
  });

  it('spells them as status shows them', () => {
    expect(guardIdText({ kind: 'mass-delete', root, deletes: 7 })).toBe('mass-delete:952003ac78fb1ea6:7');
    expect(guardIdText({ kind: 'remote-root-empty', root })).toBe('remote-root-empty:952003ac78fb1ea6');
  });

  it.each(['', 'mass-delete', 'mass-delete:r', 'mass-delete:r:0', 'mass-delete:r:-3', 'mass-delete:r:1:2', 'remote-root-empty:', 'remote-root-empty:r:5', 'drop-tables:r', 'x'])(
    'refuses %j',
    (text) => {
      expect(parseGuardId(text)).toBeNull();
    },
  );
});
