import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileTokenStore, writeTokenFile } from '../../../src/remote/box/token-file.js';
import { makeTempDir } from '../../support/tmp.js';

describe('token file', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  beforeAll(async () => {
    tmp = await makeTempDir('boxsync-tokens-');
  });
  afterAll(async () => tmp.cleanup());

  it('replaces the file atomically with mode 0600, even over a file that was world-readable, leaving no temp file', async () => {
    const path = join(tmp.dir, 'a.json');
    await writeFile(path, '{}', { mode: 0o644 });
    const t = { accessToken: 'acc', refreshToken: 'ref', expiresAtMs: 123 };
    await writeTokenFile(path, t);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual(t);
    expect(await readdir(tmp.dir)).toEqual(['a.json']);
    expect(await fileTokenStore(path).load()).toEqual(t);
  });

  it('removes the half-written temp file a killed writer left (a dead pid), never one of a live writer', async () => {
    const { dir, cleanup } = await makeTempDir('boxsync-tokens-stale-');
    try {
      const path = join(dir, 'tokens.json');
      // Above Linux's largest pid_max (2^22): no such process can exist.
      const dead = `.tokens.json.${2 ** 22 + 7}.1700000000000.tmp`;
      const live = `.tokens.json.${process.ppid}.1700000000000.tmp`;
      await writeFile(join(dir, dead), '{"accessToken":"half', { mode: 0o600 });
      await writeFile(join(dir, live), '{"accessToken":"busy', { mode: 0o600 });
      await writeFile(join(dir, 'other.json'), '{}');
      const t = { accessToken: 'acc', refreshToken: 'ref', expiresAtMs: 1 };
      await writeTokenFile(path, t);
      expect((await readdir(dir)).sort()).toEqual([live, 'other.json', 'tokens.json']);
      expect(await fileTokenStore(path).load()).toEqual(t);
    } finally {
      await cleanup();
    }
  });

  it('loads nothing from a missing file and explains a damaged one without touching it', async () => {
    expect(await fileTokenStore(join(tmp.dir, 'missing.json')).load()).toBeUndefined();
    const bad = join(tmp.dir, 'bad.json');
    await writeFile(bad, 'not json');
    await expect(fileTokenStore(bad).load()).rejects.toThrow(/boxsync login.*left as it is/);
    expect(await readFile(bad, 'utf8')).toBe('not json');
    const partial = join(tmp.dir, 'partial.json');
    await writeFile(partial, '{"accessToken":"x"}');
    await expect(fileTokenStore(partial).load()).rejects.toThrow(/refreshToken/);
  });
});
