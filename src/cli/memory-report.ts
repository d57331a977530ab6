/**
 * What the CLI tuned for a small resident set as it started (heap-tuning.ts), with malloc's arenas and V8's young
 * generation now: logged at debug level at the end of a `sync --once` (what a user or a test checks).
 */
import { getHeapSpaceStatistics } from 'node:v8';
import { appliedHeapFlags } from './heap-flags.js';
import { appliedMallocTuning, mallocArenas, type MallocTuning } from './malloc-native.js';

export interface MemoryReport {
  readonly malloc: MallocTuning | null;
  readonly mallocArenas: number | null;
  readonly v8Flags: readonly string[];
  readonly youngGenerationMiB: number;
}

export function memoryReport(): MemoryReport {
  const young = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
  return { malloc: appliedMallocTuning(), mallocArenas: mallocArenas(), v8Flags: appliedHeapFlags(), youngGenerationMiB: young / 1048576 };
}
