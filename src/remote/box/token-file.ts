/**
 * OAuth tokens and where they live. The default store is a JSON file `{accessToken, refreshToken, expiresAtMs}`
 * with mode 0600, replaced atomically (temp file in the same folder, fsync, rename, fsync of the folder), so a
 * crash leaves either the old pair or the new one, never half of either. Box refresh tokens are single-use:
 * losing the new pair means the user has to log in again.
 */
import { open, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export interface Tokens {
  readonly accessToken: string;
  readonly refreshToken: string;
  readonly expiresAtMs: number;
}

/** Where an embedding program keeps tokens; boxsync's default is `fileTokenStore`. */
export interface TokenStore {
  load(): Promise<Tokens | undefined>;
  save(tokens: Tokens): Promise<void>;
}

function isTokens(x: unknown): x is Tokens {
  if (x === null || typeof x !== 'object') return false;
  const t = x as Record<string, unknown>;
  return typeof t.accessToken === 'string' && typeof t.refreshToken === 'string' && typeof t.expiresAtMs === 'number';
}

export async function writeTokenFile(path: string, tokens: Tokens): Promise<void> {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${Date.now()}.tmp`);
  const fh = await open(tmp, 'wx', 0o600);
  try {
    await fh.writeFile(JSON.stringify(tokens), 'utf8');
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await rename(tmp, path);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
  const dir = await open(dirname(path), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

export function fileTokenStore(path: string): TokenStore {
  return {
    async load() {
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw e;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new Error(`token file ${path} is not valid JSON; run \`boxsync login\` to write it again (the file was left as it is)`);
      }
      if (!isTokens(parsed)) {
        throw new Error(`token file ${path} lacks accessToken, refreshToken or expiresAtMs; run \`boxsync login\` to write it again`);
      }
      return parsed;
    },
    save: (tokens) => writeTokenFile(path, tokens),
  };
}
