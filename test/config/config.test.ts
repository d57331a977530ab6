import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { configPath, ConfigError, loadConfig, parseConfig, rootIdFor, type Config } from '../../src/config/index.js';
import { makeTempDir } from '../support/tmp.js';

const env = { HOME: '/home/me', XDG_CONFIG_HOME: '/home/me/.config', XDG_STATE_HOME: '/home/me/.local/state', XDG_RUNTIME_DIR: '/run/user/1000' };
const FILE = '/x/config.json';
const minimal = { auth: { developerToken: 'T' }, folders: [{ remoteId: '0', localPath: '/home/me/Box' }] };

function parse(obj: unknown, e: NodeJS.ProcessEnv = env): Config {
  return parseConfig(JSON.stringify(obj), FILE, e);
}

function errorOf(obj: unknown, e: NodeJS.ProcessEnv = env): ConfigError {
  try {
    parse(obj, e);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('config defaults', () => {
  it('fills in Box URLs, XDG paths and daemon settings', () => {
    const c = parse(minimal);
    expect(c.remote).toEqual({
      apiUrl: 'https://api.box.com/2.0',
      uploadUrl: 'https://upload.box.com/api/2.0',
      tokenUrl: 'https://api.box.com/oauth2/token',
      authorizeUrl: 'https://account.box.com/api/oauth2/authorize',
    });
    expect(c.stateDir).toBe('/home/me/.local/state/boxsync');
    expect(c.socketPath).toBe('/run/user/1000/boxsync/control.sock');
    expect(c.streamType).toBe('changes');
    expect(c.transferConcurrency).toBe(4);
    expect(c.safety).toEqual({ maxDeletes: 100, maxDeleteFraction: 0.5, rootMarker: null });
    expect(c.localTrash).toEqual({ mode: 'state', retentionDays: 30 });
    expect(c.log.level).toBe('info');
    expect(c.schedules.fullRescan).toBe('0 3 * * *');
    // No fixed cap by default: the adaptive pacer follows Box's 429s.
    expect(c.rateLimit).toEqual({});
    expect(c.folders).toEqual([
      { id: rootIdFor('0', '/home/me/Box'), remoteId: '0', localPath: '/home/me/Box', direction: 'two-way', exclude: [], unselected: [], newFolders: 'sync' },
    ]);
    expect(c.file).toBe(FILE);
  });

  it('falls back to ~/.local/state and the state dir socket when XDG variables are unset', () => {
    const c = parse(minimal, { HOME: '/home/u' });
    expect(c.stateDir).toBe('/home/u/.local/state/boxsync');
    expect(c.socketPath).toBe('/home/u/.local/state/boxsync/control.sock');
  });

  it('expands ~/ and normalises paths', () => {
    const c = parse({ ...minimal, folders: [{ remoteId: '12', localPath: '~/Box/Work/', exclude: ['*.iso'], direction: 'download-only' }], stateDir: '~/st/../state' });
    expect(c.folders[0]?.localPath).toBe('/home/me/Box/Work');
    expect(c.folders[0]?.direction).toBe('download-only');
    expect(c.folders[0]?.exclude).toEqual(['*.iso']);
    expect(c.stateDir).toBe('/home/me/state');
  });

  it('accepts OAuth with a default token file in the state dir', () => {
    const c = parse({ ...minimal, auth: { clientId: 'id', clientSecret: 's' } });
    expect(c.auth).toEqual({ clientId: 'id', clientSecret: 's', tokenFile: '/home/me/.local/state/boxsync/tokens.json' });
  });

  it('strips a trailing slash from URLs (box-server on a test port)', () => {
    const c = parse({ ...minimal, remote: { apiUrl: 'http://127.0.0.1:4100/2.0/' } });
    expect(c.remote.apiUrl).toBe('http://127.0.0.1:4100/2.0');
    expect(c.remote.uploadUrl).toBe('https://upload.box.com/api/2.0');
  });
});

describe('root ids', () => {
  it('are stable and differ when either side of the pair differs', () => {
    expect(rootIdFor('0', '/a')).toBe(rootIdFor('0', '/a'));
    expect(rootIdFor('0', '/a')).toMatch(/^[0-9a-f]{16}$/);
    expect(rootIdFor('0', '/a')).not.toBe(rootIdFor('1', '/a'));
    expect(rootIdFor('0', '/a')).not.toBe(rootIdFor('0', '/b'));
  });
});

describe('config errors name the file and the key', () => {
  const cases: readonly { name: string; input: unknown; message: string }[] = [
    { name: 'relative localPath', input: { ...minimal, folders: [{ remoteId: '0', localPath: 'Box' }] }, message: 'folders[0].localPath: expected an absolute path' },
    { name: 'missing folders', input: { auth: { developerToken: 'T' } }, message: 'folders: is required' },
    { name: 'empty folders', input: { ...minimal, folders: [] }, message: 'folders: expected at least one' },
    { name: 'missing auth', input: { folders: minimal.folders }, message: 'auth: expected an object' },
    { name: 'empty auth', input: { ...minimal, auth: {} }, message: 'auth: expected {"developerToken"' },
    { name: 'oauth without secret', input: { ...minimal, auth: { clientId: 'x' } }, message: 'auth.clientSecret: is required' },
    { name: 'empty developer token', input: { ...minimal, auth: { developerToken: '' } }, message: 'auth.developerToken: expected a non-empty token' },
    { name: 'unknown key', input: { ...minimal, folders: [{ remoteId: '0', localpath: '/x' }] }, message: 'folders[0].localpath: unknown key' },
    { name: 'unknown top-level key', input: { ...minimal, statedir: '/s' }, message: 'statedir: unknown key' },
    { name: 'bad remote id', input: { ...minimal, folders: [{ remoteId: 'abc', localPath: '/b' }] }, message: 'folders[0].remoteId: expected a Box folder id' },
    { name: 'bad direction', input: { ...minimal, folders: [{ remoteId: '0', localPath: '/b', direction: 'both' }] }, message: 'folders[0].direction: expected one of' },
    { name: 'bad url', input: { ...minimal, remote: { apiUrl: 'ftp://x' } }, message: 'remote.apiUrl: expected an http:// or https:// URL' },
    { name: 'bad cron', input: { ...minimal, schedules: { fullRescan: 'daily' } }, message: 'schedules.fullRescan: expected a cron expression' },
    { name: 'fraction above 1', input: { ...minimal, safety: { maxDeleteFraction: 2 } }, message: 'safety.maxDeleteFraction:' },
    { name: 'zero concurrency', input: { ...minimal, transferConcurrency: 0 }, message: 'transferConcurrency:' },
    { name: 'bad trash mode', input: { ...minimal, localTrash: { mode: 'bin' } }, message: 'localTrash.mode: expected one of' },
    { name: 'bad log level', input: { ...minimal, log: { level: 'loud' } }, message: 'log.level: expected one of' },
    { name: 'relative stateDir', input: { ...minimal, stateDir: 'state' }, message: 'stateDir: expected an absolute path' },
    {
      name: 'overlapping roots',
      input: { ...minimal, folders: [{ remoteId: '1', localPath: '/home/me/Box' }, { remoteId: '2', localPath: '/home/me/Box/Sub' }] },
      message: 'folders[1].localPath: /home/me/Box/Sub overlaps folders[0].localPath',
    },
    {
      name: 'the same local root twice',
      input: { ...minimal, folders: [{ remoteId: '1', localPath: '/home/me/Box' }, { remoteId: '2', localPath: '/home/me/Box/' }] },
      message: 'folders[1].localPath: /home/me/Box overlaps',
    },
    {
      name: 'the same Box folder twice',
      input: { ...minimal, folders: [{ remoteId: '7', localPath: '/home/me/A' }, { remoteId: '7', localPath: '/home/me/B' }] },
      message: 'folders[1].remoteId: Box folder 7 is already configured',
    },
    { name: 'root inside stateDir', input: { ...minimal, stateDir: '/home/me' }, message: 'folders[0].localPath: /home/me/Box is inside stateDir' },
    { name: 'stateDir inside a root', input: { ...minimal, stateDir: '/home/me/Box/.state' }, message: 'stateDir: /home/me/Box/.state is inside sync root' },
    { name: 'file system root as a root', input: { ...minimal, folders: [{ remoteId: '0', localPath: '/' }], stateDir: '/' }, message: 'folders[0].localPath: the file system root' },
    { name: 'socket path too long', input: { ...minimal, socketPath: `/tmp/${'s'.repeat(120)}` }, message: 'socketPath:' },
    { name: 'top-level array', input: [minimal], message: 'expected a JSON object at the top level' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const e = errorOf(c.input);
      expect(e.message).toContain(`config error in ${FILE}: `);
      expect(e.message).toContain(c.message);
      expect(e.code).toBe('config_invalid');
      expect(e.disposition).toBe('fatal');
    });
  }

  it('reports every problem at once, not just the first', () => {
    const e = errorOf({ ...minimal, transferConcurrency: 0, log: { level: 'loud' } });
    expect(e.problems.map((p) => p.key)).toEqual(['transferConcurrency', 'log.level']);
  });

  it('reports auth problems together with problems elsewhere', () => {
    const e = errorOf({ ...minimal, auth: { clientId: 'x' }, transferConcurrency: 0 });
    expect(e.problems.map((p) => p.key)).toEqual(['transferConcurrency', 'auth.clientSecret']);
  });

  it('names JSON syntax errors', () => {
    expect(() => parseConfig('{"auth": ', FILE, env)).toThrow(/config error in \/x\/config\.json: not valid JSON/);
  });

  it('never echoes the token', () => {
    const e = errorOf({ ...minimal, auth: { developerToken: 'SECRET-TOKEN-123', extra: 1 } });
    expect(e.message).toContain('auth.extra: unknown key');
    expect(e.message).not.toContain('SECRET-TOKEN-123');
    expect(JSON.stringify(e.details)).not.toContain('SECRET-TOKEN-123');
  });
});

describe('finding the file', () => {
  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await cleanup?.();
    cleanup = undefined;
  });

  it('prefers --config, then BOXSYNC_CONFIG, then $XDG_CONFIG_HOME/boxsync/config.json', () => {
    expect(configPath({ path: '/a.json', env: { ...env, BOXSYNC_CONFIG: '/b.json' } })).toBe('/a.json');
    expect(configPath({ env: { ...env, BOXSYNC_CONFIG: '/b.json' } })).toBe('/b.json');
    expect(configPath({ env })).toBe('/home/me/.config/boxsync/config.json');
    expect(configPath({ env: { HOME: '/home/u' } })).toBe('/home/u/.config/boxsync/config.json');
  });

  it('loads the XDG default from a real file', async () => {
    const t = await makeTempDir();
    cleanup = t.cleanup;
    await mkdir(join(t.dir, 'cfg', 'boxsync'), { recursive: true });
    await writeFile(join(t.dir, 'cfg', 'boxsync', 'config.json'), JSON.stringify({ ...minimal, folders: [{ remoteId: '0', localPath: join(t.dir, 'Box') }] }));
    const c = await loadConfig({ env: { HOME: t.dir, XDG_CONFIG_HOME: join(t.dir, 'cfg') } });
    expect(c.file).toBe(join(t.dir, 'cfg', 'boxsync', 'config.json'));
    expect(c.stateDir).toBe(join(t.dir, '.local', 'state', 'boxsync'));
  });

  it('warns, without failing, when a file holding a secret is readable by others', async () => {
    const t = await makeTempDir();
    cleanup = t.cleanup;
    const file = join(t.dir, 'config.json');
    await writeFile(file, JSON.stringify({ ...minimal, folders: [{ remoteId: '0', localPath: join(t.dir, 'Box') }] }), { mode: 0o644 });
    await chmod(file, 0o644);
    const open = await loadConfig({ path: file, env });
    expect(open.warnings).toEqual([`${file} holds a developer token and other users can read it (mode 0644); run: chmod 600 ${file}`]);
    expect(open.warnings.join()).not.toContain('"T"');
    await chmod(file, 0o600);
    expect((await loadConfig({ path: file, env })).warnings).toEqual([]);
  });

  it('says what to do when the file is missing', async () => {
    const t = await makeTempDir();
    cleanup = t.cleanup;
    const file = join(t.dir, 'nope.json');
    await expect(loadConfig({ path: file, env })).rejects.toThrow(`config error in ${file}: file not found; create it`);
  });
});
