/**
 * The current journal schema: schema.sql, read at run time so that the SQL file stays the one documented source.
 * From the sources it sits next to this module; from a build (dist/journal/) it is read from src/journal/.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The user_version a journal has once schema.sql (or the migrations) ran. */
export const SCHEMA_VERSION = 6;

const candidates = [new URL('./schema.sql', import.meta.url), new URL('../../src/journal/schema.sql', import.meta.url)];

let cached: string | undefined;

export function schemaSql(): string {
  if (cached !== undefined) return cached;
  const found = candidates.map((u) => fileURLToPath(u)).find((p) => existsSync(p));
  if (found === undefined) {
    throw new Error(`journal schema.sql not found (looked in ${candidates.map((u) => fileURLToPath(u)).join(', ')}); reinstall boxsync`);
  }
  cached = readFileSync(found, 'utf8');
  return cached;
}
