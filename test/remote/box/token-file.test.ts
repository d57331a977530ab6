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
