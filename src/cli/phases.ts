/**
 * BOXSYNC_PHASES=1 (bin/boxsync.js): the parts of a `sync` run mark when they were reached, in ms since the process
 * started, and bin/boxsync.js prints them as one line at exit. Without it nothing is recorded (the list is absent).
 */
const PHASES = Symbol.for('boxsync.phases');

/** Marks that the run reached `name` now (nothing unless BOXSYNC_PHASES=1 started the list). */
export function phase(name: string): void {
  const marks = (globalThis as { [PHASES]?: [string, number][] })[PHASES];
  marks?.push([name, process.uptime() * 1000]);
}

/** Whether BOXSYNC_PHASES=1 started the list. */
export function phasesOn(): boolean {
  return (globalThis as { [PHASES]?: unknown })[PHASES] !== undefined;
}

/** A marker that marks each name only the first time it is given (the engine's phases recur in every pass and window). */
export function firstOfEach(): (name: string) => void {
  const seen = new Set<string>();
  return (name) => {
    if (seen.has(name)) return;
    seen.add(name);
    phase(name);
  };
}
