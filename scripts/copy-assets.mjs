// Part of `npm run build`: copies the files the compiled code reads at run time (not TypeScript, so tsc leaves
// them out) from src/ to the same place under dist/. Today: the journal's schema.sql.
import { cpSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');
const ASSET = /\.(sql|json)$/;
function walk(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (ASSET.test(name)) cpSync(p, join(root, 'dist', relative(src, p)));
  }
}
walk(src);
