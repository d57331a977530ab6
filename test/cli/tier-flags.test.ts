/**
 * V8's tier-up flag set by the CLI as it starts (src/cli/tier-flags.ts; issue 29 point 7): who gets it, and that it
 * is a flag this node knows (`v8.setFlagsFromString` takes an unknown one without a word; node's command line
 * refuses it).
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TIER_FLAGS, TIER_FLAGS, tierFlagsWanted } from '../../src/cli/tier-flags.js';
import { repoRoot } from '../support/cli.js';

describe('tierFlagsWanted', () => {
  const cases: readonly (readonly [string, readonly string[], NodeJS.ProcessEnv, boolean])[] = [
    ['by default', [], {}, true],
    ['beside other node flags', ['--max-old-space-size=4096'], { NODE_OPTIONS: '--enable-source-maps' }, true],
    ['not with BOXSYNC_V8_TIER=default', [], { BOXSYNC_V8_TIER: 'default' }, false],
    ["not when node's command line has the flag", ['--interrupt-budget=10000'], {}, false],
    ['not when NODE_OPTIONS has it (either spelling)', [], { NODE_OPTIONS: '--interrupt_budget=10000' }, false],
  ];
  it.each(cases)('sets the flag %s: %j %j -> %s', (_, argv, env, want) => {
    expect(tierFlagsWanted(argv, env)).toBe(want);
  });

  it('names a flag this node knows (node rejects an unknown V8 flag on its command line)', () => {
    for (const flag of TIER_FLAGS) {
      const r = spawnSync(process.execPath, [flag, '-e', 'process.stdout.write("ran")'], { cwd: repoRoot, encoding: 'utf8' });
      expect(r.stderr).toBe('');
      expect(r.stdout).toBe('ran');
    }
    const bad = spawnSync(process.execPath, ['--interrupt-budget-not-a-flag=1', '-e', '0'], { cwd: repoRoot, encoding: 'utf8' });
    expect(bad.status).not.toBe(0);
  });

  it("sets back V8's own value once a run is long: the default this node's V8 lists", () => {
    const options = spawnSync(process.execPath, ['--v8-options'], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 }).stdout;
    for (const flag of DEFAULT_TIER_FLAGS) expect(options).toContain(`default: ${flag}\n`);
  });
});
