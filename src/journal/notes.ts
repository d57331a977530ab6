/**
 * Notes: small facts kept beside the journal in `<journal>.notes` (0600, JSON), not in it (Journal.setNote). A
 * no-change run writes nothing to the journal (first-write.ts), yet the time of its success must stay what
 * `status` shows: written here, it costs one small write with no fsync instead of the WAL's fsyncs. Best effort
 * both ways: a note that cannot be written or read is missing, and a reader then falls back on the journal's value.
 */
import { readFileSync, writeFileSync } from 'node:fs';

export interface Notes {
  get(key: string): string | undefined;
  set(key: string, value: string): void;
}

export function journalNotes(journalPath: string): Notes {
  const file = `${journalPath}.notes`;
  let values: Record<string, string> | undefined;
  const load = (): Record<string, string> => {
    if (values !== undefined) return values;
    values = {};
    try {
      const v: unknown = JSON.parse(readFileSync(file, 'utf8'));
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
        for (const [k, x] of Object.entries(v)) if (typeof x === 'string') values[k] = x;
      }
    } catch {
      // none yet, or unreadable: no notes
    }
    return values;
  };
  return {
    get: (key) => load()[key],
    set: (key, value) => {
      const all = load();
      if (all[key] === value) return;
      all[key] = value;
      try {
        writeFileSync(file, `${JSON.stringify(all)}\n`, { mode: 0o600 });
      } catch {
        // best effort, see above
      }
    },
  };
}
