// Part of `npm run build`: copies the files the compiled code reads at run time (not TypeScript, so tsc leaves
// them out) from src/ to the same place under dist/. None today (the journal's schema is in migrations.ts).
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

// The manual page, generated from the command tree by the compiled CLI (package.json "man" points at it).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
writeFileSync(join(root, 'dist', 'boxsync.1'), execFileSync(process.execPath, [join(root, 'dist', 'cli', 'main.js'), 'man'], { encoding: 'utf8' }));
