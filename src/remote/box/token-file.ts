/**
 * OAuth tokens and where they live. The default store is a JSON file `{accessToken, refreshToken, expiresAtMs}`
 * with mode 0600, replaced atomically (temp file in the same folder, fsync, rename, fsync of the folder), so a
 * crash leaves either the old pair or the new one, never half of either (and the temp file a killed writer left
 * is removed by the next write). Box refresh tokens are single-use: losing the new pair means the user has to
 * log in again.
 */
import { open, readdir, readFile, rename, unlink } from 'node:fs/promises';
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
  await removeStaleTemps(path);
}

/**
 * A writer killed between creating its temp file and the rename leaves a token-bearing temp file behind (the
 * token file itself is whole: the old pair). Remove those of processes that are gone, never a live writer's.
 */
async function removeStaleTemps(path: string): Promise<void> {
  const prefix = `.${basename(path)}.`;
  const names = await readdir(dirname(path)).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith('.tmp')) continue;
    const pid = Number(name.slice(prefix.length).split('.')[0]);
    if (!Number.isInteger(pid) || pid <= 0 || processAlive(pid)) continue;
    await unlink(join(dirname(path), name)).catch(() => undefined);
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
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
