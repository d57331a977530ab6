import { describe, expect, it } from 'vitest';
import { timeSlicer } from '../../src/engine/time-slice.js';

describe('timeSlicer (manual clock)', () => {
  it('gives the event loop a turn only once the budget has passed since the last turn', async () => {
    let t = 0;
    const slice = timeSlicer(20, () => t);
    const ran: string[] = [];
    // Within the budget: no turn, so an immediate queued before has not run when slice() is done.
    setImmediate(() => ran.push('first'));
    t = 19;
    await slice();
    expect(ran).toEqual([]);
    // Past it: a turn, so the immediate ran before slice() returned.
    t = 20;
    await slice();
    expect(ran).toEqual(['first']);
    // The budget starts again from that turn.
    setImmediate(() => ran.push('second'));
    t = 39;
    await slice();
    expect(ran).toEqual(['first']);
    t = 40;
    await slice();
    expect(ran).toEqual(['first', 'second']);
  });
});
