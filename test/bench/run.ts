/**
 * `npm run bench`: runs every test/bench/*.bench.ts in order and prints figures. Benchmarks print
 * measurements; they assert nothing about speed. `npm run bench -- NAME` runs only benches whose file
 * name contains NAME.
 */
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const filter = process.argv[2];
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => !filter || f.includes(filter))
  .sort();
for (const f of files) {
  console.log(`\n### ${f.replace(/\.bench\.ts$/, '')}`);
  const mod = (await import(pathToFileURL(join(here, f)).href)) as { run: () => Promise<void> };
  await mod.run();
}
