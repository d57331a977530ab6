#!/usr/bin/env node
/**
 * The boxsync command line: argument parsing, output and exit codes. Nothing else.
 * Each command lives in its own module under commands/ and is loaded only when used, so `boxsync status`
 * starts fast and `boxsync server` never loads the sync engine.
 *
 * Exit codes (shared by every command; see README):
 *   0 ok / converged, 1 some items failed and will be retried (status: the daemon needs attention; see README),
 *   2 fatal (config, auth, journal), 3 stopped by a safety guard (for `sync --dry-run`: a guard would stop it).
 * The item commands (commands/items.ts) add 4 outside every root, 5 not synced, 6 locked by another user,
 * 7 credentials refused, 8 the daemon holds the state dir but does not answer.
 */
import './heap-tuning.js';
import { runCli } from './run-cli.js';

await runCli(process.argv);
