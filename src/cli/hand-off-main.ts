/**
 * The entry of dist/cli-script/hand-off.cjs (scripts/bundle-cli.mjs), which bin/boxsync.js runs first for a built
 * `boxsync sync --once`: `done` is the exit code of the run handed to a running daemon, or null when there is none
 * (hand-off-first.ts), and the sync bundle runs.
 */
import { handOffFirst } from './hand-off-first.js';

export const done = handOffFirst(process.argv.slice(2));
