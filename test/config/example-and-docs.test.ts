/**
 * The shipped example config must load, and every key the schema accepts must be documented in config/README.md
 * and present in the example, so the documentation cannot drift from the code.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseConfig } from '../../src/config/index.js';
import { developerTokenAuthSchema, oauthAuthSchema, rawConfigSchema } from '../../src/config/schema.js';
import { repoRoot } from '../support/cli.js';

const exampleFile = join(repoRoot, 'config', 'config.example.json');
const readme = readFileSync(join(repoRoot, 'config', 'README.md'), 'utf8');

/** Every key path of a zod object schema, arrays as `[]`. */
function keyPaths(schema: z.ZodType, prefix: string): string[] {
  let s: z.ZodType = schema;
  for (;;) {
    const def = (s as unknown as { def: { type: string; innerType?: z.ZodType; in?: z.ZodType } }).def;
    if (def.type === 'default' || def.type === 'prefault' || def.type === 'optional' || def.type === 'nullable') s = def.innerType!;
    else if (def.type === 'pipe') s = def.in!;
    else break;
  }
  if (s instanceof z.ZodObject) {
    return Object.entries(s.shape as Record<string, z.ZodType>).flatMap(([k, v]) => {
      const p = prefix === '' ? k : `${prefix}.${k}`;
      const inner = keyPaths(v, p);
      return inner.length > 0 ? inner : [p];
    });
  }
  if (s instanceof z.ZodArray) {
    const inner = keyPaths(s.element as z.ZodType, `${prefix}[]`);
    return inner.length > 0 ? [prefix, ...inner] : [];
  }
  return [];
}

describe('config/config.example.json', () => {
  it('loads', () => {
    const c = parseConfig(readFileSync(exampleFile, 'utf8'), exampleFile, { HOME: '/home/me' });
    expect(c.folders).toHaveLength(1);
    expect(c.folders[0]?.localPath).toBe('/home/me/Box');
    expect('clientId' in c.auth).toBe(true);
  });

  it('documents every key in config/README.md', () => {
    const keys = [
      ...keyPaths(rawConfigSchema, '').filter((k) => k !== 'auth'),
      ...keyPaths(developerTokenAuthSchema, 'auth'),
      ...keyPaths(oauthAuthSchema, 'auth'),
    ];
    expect(keys).toContain('folders[].localPath');
    expect(keys).toContain('safety.maxDeleteFraction');
    const missing = keys.filter((k) => !readme.includes(`\`${k}\``));
    expect(missing).toEqual([]);
  });

  it('shows every non-auth key', () => {
    const example = JSON.parse(readFileSync(exampleFile, 'utf8')) as Record<string, unknown>;
    const has = (path: string): boolean => {
      let v: unknown = example;
      for (const part of path.split('.')) {
        const [name, arr] = part.endsWith('[]') ? [part.slice(0, -2), true] : [part, false];
        v = (v as Record<string, unknown> | undefined)?.[name];
        if (arr) v = (v as unknown[] | undefined)?.[0];
      }
      return v !== undefined;
    };
    const missing = keyPaths(rawConfigSchema, '').filter((k) => k !== 'auth' && !has(k));
    expect(missing).toEqual([]);
  });
});
