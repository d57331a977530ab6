/**
 * The one loader of the native addons (src/local/native-addon.ts), which syncfs-native.ts, walk-native.ts,
 * inotify-native.ts and cli/malloc-native.ts call: the environment's file or `off`, the reasons, never a throw, and
 * one answer per addon and path. The real addons are the ones `npm ci` built (build/Release).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadNativeAddon, nativeAddonPath, type NativeAddonSpec } from '../../src/local/native-addon.js';
import { repoRoot } from '../support/cli.js';

const SYNCFS: NativeAddonSpec<{ syncfs: unknown }> = {
  file: 'boxsync_syncfs.node',
  envVar: 'BOXSYNC_TEST_SYNCFS_ADDON',
  linuxOnly: 'Linux only',
  notBuiltHint: '(build it)',
  accept: (got, path) => (typeof got.syncfs === 'function' ? { syncfs: got.syncfs } : `${path} is not it`),
};

let dir: string | null = null;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = null;
});

describe('loadNativeAddon', () => {
  it('finds the addon under build/Release, or the file the environment names', () => {
    expect(nativeAddonPath(SYNCFS, {})).toBe(join(repoRoot, 'build', 'Release', 'boxsync_syncfs.node'));
    expect(nativeAddonPath(SYNCFS, { BOXSYNC_TEST_SYNCFS_ADDON: '/elsewhere/x.node' })).toBe('/elsewhere/x.node');
    expect(nativeAddonPath(SYNCFS, { BOXSYNC_TEST_SYNCFS_ADDON: '' })).toBe(join(repoRoot, 'build', 'Release', 'boxsync_syncfs.node'));
    const built = loadNativeAddon(SYNCFS, nativeAddonPath(SYNCFS, {}));
    expect(built.ok).toBe(true);
    if (built.ok) expect(typeof built.addon.syncfs).toBe('function');
  });

  it('answers with the reason and never throws: off, missing, another file, a file that throws as it loads', async () => {
    expect(loadNativeAddon(SYNCFS, 'off')).toEqual({ ok: false, reason: 'turned off (BOXSYNC_TEST_SYNCFS_ADDON=off)' });
    expect(loadNativeAddon(SYNCFS, '/nonexistent/boxsync_syncfs.node')).toEqual({
      ok: false,
      reason: '/nonexistent/boxsync_syncfs.node is not built (build it)',
    });
    const other = join(repoRoot, 'package.json');
    expect(loadNativeAddon(SYNCFS, other)).toEqual({ ok: false, reason: `${other} is not it` });
    dir = await mkdtemp(join(tmpdir(), 'native-addon-'));
    const broken = join(dir, 'broken.cjs');
    await writeFile(broken, "throw new Error('wrong ELF class\\nmore');\n");
    expect(loadNativeAddon(SYNCFS, broken)).toEqual({ ok: false, reason: `${broken} did not load (wrong ELF class)` });
    const throwing = join(dir, 'throwing.cjs');
    await writeFile(throwing, "module.exports = new Proxy({}, { get() { throw new Error('no'); } });\n");
    expect(loadNativeAddon(SYNCFS, throwing)).toEqual({ ok: false, reason: `${throwing} did not load (no)` });
  });

  it('asks once per addon and path: a file that changes after the first answer keeps that answer', async () => {
    dir = await mkdtemp(join(tmpdir(), 'native-addon-'));
    const file = join(dir, 'late.cjs');
    const first = loadNativeAddon(SYNCFS, file);
    expect(first.ok).toBe(false);
    await writeFile(file, 'module.exports = { syncfs() {} };\n');
    expect(loadNativeAddon(SYNCFS, file)).toBe(first);
    // Another addon at the same path is asked on its own.
    expect(loadNativeAddon({ ...SYNCFS, file: 'other.node' }, file).ok).toBe(true);
  });
});
