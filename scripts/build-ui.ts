// Part of `npm run build`: bundles the daemon's web page (src/daemon/ui/page/, Preact + htm) with esbuild into
// dist/ui/app.js and app.css, which an installed package serves (src/daemon/ui/page-assets.ts). Run from the
// sources, the daemon bundles the page in memory instead and writes nothing.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundlePage, PAGE_ENTRY } from '../src/daemon/ui/page-assets.js';

const out = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'ui');
const { js, css } = await bundlePage(PAGE_ENTRY);
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'app.js'), js);
writeFileSync(join(out, 'app.css'), css);
process.stdout.write(`web page bundled: dist/ui/app.js (${js.length} bytes), dist/ui/app.css (${css.length} bytes)\n`);
