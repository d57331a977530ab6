/**
 * The SDK suite's globalSetup: prints, once per run, which of box-node-sdk's test files are left out and why,
 * and which tests inside the in-scope files are skipped and why (vitest prints each skipped test with its
 * reason in its name as well).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { excludedFiles, IN_SCOPE_FILES, SDK_ROOT, SDK_VERSION, SKIPPED_TESTS } from './scope.js';

export default function setup(): void {
  const installed = (JSON.parse(readFileSync(join(SDK_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  if (installed !== SDK_VERSION) {
    throw new Error(`sdk-suite: box-node-sdk ${installed} is installed, the suite is pinned to ${SDK_VERSION} (run npm ci)`);
  }
  const lines = [
    `box-node-sdk ${SDK_VERSION} integration tests against box-server: ${IN_SCOPE_FILES.length} files in scope.`,
    'Excluded files (out of scope):',
    ...excludedFiles().map(({ file, reason }) => `  - ${file}: ${reason}`),
    'Skipped tests inside in-scope files:',
    ...Object.entries(SKIPPED_TESTS).map(([name, reason]) => `  - ${name}: ${reason}`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
