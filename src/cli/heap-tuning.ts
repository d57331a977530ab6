/**
 * Imported first by main.ts, so that it runs before the rest of the CLI allocates: V8's heap sizing for a small
 * resident set (heap-flags.ts).
 */
import { applyHeapFlags } from './heap-flags.js';

applyHeapFlags();
