/**
 * From the validated file shape to the Config the program runs with: environment-dependent defaults, `~/`
 * expansion, path normalisation, the auth shape, and the checks that span keys (overlapping roots, a root inside
 * the state dir, one Box folder configured twice). Every problem names its key.
 */
import { join } from 'node:path';
import type { SyncRoot } from '../core/model.js';
import { asRemoteId } from '../core/model.js';
import type { ConfigProblem } from './config-error.js';
import { problemsFromIssues } from './format-issues.js';
import { rootIdFor } from './root-id.js';
import { developerTokenAuthSchema, oauthAuthSchema, type RawConfig } from './schema.js';
import type { XdgDirs } from './xdg.js';
import { within } from './folder-pair.js';
import { homeExpander, statePaths } from './locate.js';

/** Longest path a unix socket address can hold on Linux (sun_path is 108 bytes with the NUL). */
const MAX_SOCKET_PATH_BYTES = 107;

export type AuthConfig =
  | { readonly developerToken: string }
  | { readonly clientId: string; readonly clientSecret: string; readonly tokenFile: string };

export interface Config {
  /** Absolute path of the file this came from. */
  readonly file: string;
  readonly remote: { readonly apiUrl: string; readonly uploadUrl: string; readonly tokenUrl: string; readonly authorizeUrl: string };
  readonly auth: AuthConfig;
  /** The folder pairs, each with its stable RootId. */
  readonly folders: readonly SyncRoot[];
  readonly stateDir: string;
  readonly socketPath: string;
  readonly streamType: RawConfig['streamType'];
  readonly schedules: Readonly<RawConfig['schedules']>;
  readonly rateLimit: Readonly<RawConfig['rateLimit']>;
  readonly http: Readonly<RawConfig['http']>;
  readonly transferConcurrency: number;
  readonly planWindowEntries: number;
  readonly safety: Readonly<RawConfig['safety']>;
  readonly localTrash: Readonly<RawConfig['localTrash']>;
  readonly log: Readonly<RawConfig['log']>;
  /** The daemon's own settings (environment variables override them; see src/daemon/lifecycle/daemon-settings.ts). */
  readonly daemon: Readonly<RawConfig['daemon']>;
  /** Things worth telling the user that do not stop anything (e.g. a secret in a file others can read). */
  readonly warnings: readonly string[];
}

export type ResolveResult = { readonly ok: true; readonly config: Config } | { readonly ok: false; readonly problems: readonly ConfigProblem[] };

export function resolveConfig(raw: RawConfig, file: string, dirs: XdgDirs): ResolveResult {
  const problems: ConfigProblem[] = [];
  const expand = homeExpander(dirs);

  const { stateDir, socketPath } = statePaths(raw, dirs);
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH_BYTES) {
    problems.push({ key: 'socketPath', message: `${socketPath} is longer than ${MAX_SOCKET_PATH_BYTES} bytes, the limit for a unix socket; set a shorter socketPath` });
  }

  const auth = resolveAuth(raw.auth, stateDir, expand, problems);

  const folders: SyncRoot[] = raw.folders.map((f) => {
    const localPath = expand(f.localPath);
    return { id: rootIdFor(f.remoteId, localPath), remoteId: asRemoteId(f.remoteId), localPath, direction: f.direction, exclude: f.exclude, unselected: normalizeUnselected(f.selective.unselected), newFolders: f.selective.newFolders };
  });
  folders.forEach((f, i) => {
    if (f.localPath === '/') problems.push({ key: `folders[${i}].localPath`, message: 'the file system root cannot be a sync root' });
    if (within(f.localPath, stateDir)) {
      problems.push({ key: `folders[${i}].localPath`, message: `${f.localPath} is inside stateDir ${stateDir}; keep sync roots and the state dir apart` });
    } else if (within(stateDir, f.localPath)) {
      problems.push({ key: 'stateDir', message: `${stateDir} is inside sync root folders[${i}].localPath (${f.localPath}); boxsync would sync its own journal` });
    }
    for (let j = 0; j < i; j++) {
      const g = folders[j]!;
      if (within(f.localPath, g.localPath) || within(g.localPath, f.localPath)) {
        problems.push({ key: `folders[${i}].localPath`, message: `${f.localPath} overlaps folders[${j}].localPath (${g.localPath}); local roots must not contain each other` });
      }
      if (f.remoteId === g.remoteId) {
        problems.push({ key: `folders[${i}].remoteId`, message: `Box folder ${f.remoteId} is already configured as folders[${j}]; a Box folder can be synced to one place only` });
      }
    }
  });

  if (problems.length > 0 || auth === null) return { ok: false, problems };
  return {
    ok: true,
    config: {
      file,
      remote: raw.remote,
      auth,
      folders,
      stateDir,
      socketPath,
      streamType: raw.streamType,
      schedules: raw.schedules,
      rateLimit: raw.rateLimit,
      http: raw.http,
      transferConcurrency: raw.transferConcurrency,
      planWindowEntries: raw.planWindowEntries,
      safety: raw.safety,
      localTrash: raw.localTrash,
      log: raw.log,
      daemon: raw.daemon,
      warnings: [],
    },
  };
}

/** Problems with the auth block alone, so that a file with errors elsewhere still hears about its auth too. */
export function authProblems(auth: unknown): ConfigProblem[] {
  if (typeof auth !== 'object' || auth === null || Array.isArray(auth)) return [];
  const problems: ConfigProblem[] = [];
  resolveAuth(auth as Record<string, unknown>, '/', (p) => p, problems);
  return problems;
}

function resolveAuth(
  auth: Readonly<Record<string, unknown>>,
  stateDir: string,
  expand: (p: string) => string,
  problems: ConfigProblem[],
): AuthConfig | null {
  if ('developerToken' in auth) {
    const r = developerTokenAuthSchema.safeParse(auth);
    if (r.success) return r.data;
    problems.push(...problemsFromIssues(r.error.issues, ['auth']));
    return null;
  }
  const r = oauthAuthSchema.safeParse(auth);
  if (r.success) return { clientId: r.data.clientId, clientSecret: r.data.clientSecret, tokenFile: expand(r.data.tokenFile ?? join(stateDir, 'tokens.json')) };
  if (Object.keys(auth).length === 0) {
    problems.push({ key: 'auth', message: 'expected {"developerToken": ...} or {"clientId", "clientSecret", "tokenFile"}' });
  } else {
    problems.push(...problemsFromIssues(r.error.issues, ['auth']));
  }
  return null;
}

/** `selective.unselected` entries as root-relative folder paths: slashes trimmed, duplicates dropped. */
export function normalizeUnselected(paths: readonly string[]): string[] {
  const out = paths.map((p) => p.split('/').filter((s) => s !== '' && s !== '.').join('/')).filter((p) => p !== '');
  return [...new Set(out)].sort();
}
