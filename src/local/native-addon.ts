/**
 * The one loader of boxsync's native addons (native/*.c, each built by `npm ci` into build/Release/<name>.node
 * through scripts/build-native.mjs, one binding.gyp target each): syncfs-native.ts, walk-native.ts,
 * inotify-native.ts and cli/malloc-native.ts each describe theirs (its file, its environment variable, what a right
 * one exports) and call loadNativeAddon.
 *
 * - The file: build/Release/<file> beside the package (this module's ../../: src/local/ from the sources,
 *   dist/local/ or dist/cli-script/ when built; all as deep), or the path in the addon's environment variable
 *   (BOXSYNC_*_ADDON: a packager's own build; tests point it at a missing file). The value `off` turns it off.
 * - Never throws: a missing file, a broken build, a wrong file, another platform is an answer with the reason, and
 *   the caller falls back to its JavaScript way.
 * - Asked once per addon and path: the answer is kept for the life of the process.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export interface NativeAddonSpec<A> {
  /** The file name under build/Release, e.g. `boxsync_syncfs.node`. */
  readonly file: string;
  /** The environment variable that names another file, or `off`. */
  readonly envVar: string;
  /** The reason given on a platform other than Linux. */
  readonly linuxOnly: string;
  /** Added to "<path> is not built" (e.g. how to build it). */
  readonly notBuiltHint?: string;
  /** The addon from what the file exports, or the reason it is not the right one. */
  accept(exports: Record<string, unknown>, path: string): A | string;
}

export type NativeAddonLoad<A> = { readonly ok: true; readonly addon: A } | { readonly ok: false; readonly reason: string };

const loaded = new Map<string, NativeAddonLoad<unknown>>();

/** Where the addon is looked for: the environment's file, or build/Release/<file> of the package. */
export function nativeAddonPath(spec: NativeAddonSpec<unknown>, env: NodeJS.ProcessEnv = process.env): string {
  return env[spec.envVar] || fileURLToPath(new URL(`../../build/Release/${spec.file}`, import.meta.url));
}

/** The addon, or why not (not Linux, turned off, not built, not loadable, another file). Never throws. */
export function loadNativeAddon<A>(spec: NativeAddonSpec<A>, path: string = nativeAddonPath(spec)): NativeAddonLoad<A> {
  const key = `${spec.file}\0${path}`;
  const known = loaded.get(key) as NativeAddonLoad<A> | undefined;
  if (known) return known;
  const answer = load(spec, path);
  loaded.set(key, answer);
  return answer;
}

function load<A>(spec: NativeAddonSpec<A>, path: string): NativeAddonLoad<A> {
  if (process.platform !== 'linux') return { ok: false, reason: spec.linuxOnly };
  if (path === 'off') return { ok: false, reason: `turned off (${spec.envVar}=off)` };
  let exports: Record<string, unknown>;
  try {
    exports = createRequire(import.meta.url)(path) as Record<string, unknown>;
  } catch (e) {
    const code = (e as { code?: string }).code;
    return {
      ok: false,
      reason: code === 'MODULE_NOT_FOUND'
        ? `${path} is not built${spec.notBuiltHint ? ` ${spec.notBuiltHint}` : ''}`
        : `${path} did not load (${e instanceof Error ? e.message.split('\n')[0] : String(e)})`,
    };
  }
  try {
    const addon = spec.accept(exports, path);
    return typeof addon === 'string' ? { ok: false, reason: addon } : { ok: true, addon };
  } catch (e) {
    return { ok: false, reason: `${path} did not load (${e instanceof Error ? e.message.split('\n')[0] : String(e)})` };
  }
}
