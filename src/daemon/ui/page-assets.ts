/**
 * The page's script and style sheet. An installed package serves the bundle `npm run build` wrote to dist/ui/
 * (scripts/build-ui.mjs). Run from the sources (tests, `npm run demo`, a daemon started with tsx) there is no
 * dist/ui/: the page is bundled once per process, in memory, with esbuild (a devDependency, present wherever the
 * sources are), and nothing is written anywhere. Preact and htm are bundled in; nothing comes from a CDN.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

export interface PageAssets {
  readonly js: string;
  readonly css: string;
}

/** The page's entry point, next to this file in the sources. */
export const PAGE_ENTRY = fileURLToPath(new URL('./page/main.ts', import.meta.url));

let cached: Promise<PageAssets> | null = null;

export function pageAssets(): Promise<PageAssets> {
  cached ??= load().catch((e: unknown) => {
    cached = null;
    throw e;
  });
  return cached;
}

async function load(): Promise<PageAssets> {
  // dist/daemon/ui/page-assets.js → dist/ui/; from src/daemon/ui/ the same step lands on src/ui/, which does not exist.
  const built = new URL('../../ui/', import.meta.url);
  try {
    const [js, css] = await Promise.all([readFile(new URL('app.js', built), 'utf8'), readFile(new URL('app.css', built), 'utf8')]);
    return { js, css };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  return bundlePage(PAGE_ENTRY);
}

/** Bundle the page from its sources (also used by scripts/build-ui.mjs to write dist/ui/). */
export async function bundlePage(entry: string): Promise<PageAssets> {
  let esbuild: typeof import('esbuild');
  try {
    esbuild = await import('esbuild');
  } catch {
    throw new Error('the web page is not built (no dist/ui/) and esbuild is not installed to build it; run `npm run build` in the boxsync checkout');
  }
  const out = await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    outdir: '/ui',
    entryNames: 'app',
    format: 'iife',
    target: 'es2020',
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
  });
  const js = out.outputFiles.find((f) => f.path.endsWith('.js'))?.text;
  const css = out.outputFiles.find((f) => f.path.endsWith('.css'))?.text ?? '';
  if (js === undefined) throw new Error('bundling the web page produced no script');
  return { js, css };
}
