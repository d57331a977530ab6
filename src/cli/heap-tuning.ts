/**
 * Imported first by main.ts, so that it runs before the rest of the CLI allocates: glibc malloc's arenas
 * (malloc-native.ts; bin/boxsync.js sets them even earlier) and V8's heap sizing (heap-flags.ts), both for a small
 * resident set. memory-report.ts says what was set.
 */
import { applyHeapFlags } from './heap-flags.js';
import { applyMallocTuning } from './malloc-native.js';

applyMallocTuning();
applyHeapFlags();
