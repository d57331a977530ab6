/** Types of bin/malloc-rule.js (plain JavaScript: bin/boxsync.js runs it before any build or import). */
export declare const ARENA_MAX: number;
export declare function mallocTuningWanted(env: NodeJS.ProcessEnv): boolean;
