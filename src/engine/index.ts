/** The sync engine: build it with createEngine; everything it needs comes in through EngineDeps (ports). */
export { createEngine } from './engine.js';
export type * from './types.js';
