/**
 * The SDK suite's globalSetup: prints, once per run, which of box-node-sdk's test files are left out and why,
 * and which tests inside the in-scope files are skipped and why (vitest prints each skipped test with its
 * reason in its name as well); at the end (teardown), one line per SDK test (PASS/FAIL/SKIP) and a summary
 * line, whatever reporter the run uses.
 */
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { excludedFiles, IN_SCOPE_FILES, SDK_ROOT, SDK_VERSION, SKIPPED_TESTS } from './scope.js';

interface TaskLike {
  type: string;
  name: string;
  mode?: string;
  result?: { state?: string };
  tasks?: TaskLike[];
  filepath?: string;
  projectName?: string;
}

function printResults(project: TestProject): void {
  const files = (project.vitest.state.getFiles() as unknown as TaskLike[]).filter((f) => f.projectName === project.name);
  if (files.length === 0) return;
  files.sort((a, b) => (a.filepath ?? a.name).localeCompare(b.filepath ?? b.name));
  const counts = { PASS: 0, FAIL: 0, SKIP: 0 };
  const lines: string[] = [];
  const walk = (file: string, t: TaskLike): void => {
    if (t.type === 'test') {
      const state = t.result?.state;
      const verdict = state === 'pass' ? 'PASS' : state === 'fail' ? 'FAIL' : t.mode === 'skip' || t.mode === 'todo' || state === 'skip' ? 'SKIP' : 'FAIL';
      counts[verdict]++;
      lines.push(`  ${verdict} ${file} > ${t.name}`);
    }
    for (const c of t.tasks ?? []) walk(file, c);
  };
  for (const f of files) {
    const name = basename(f.filepath ?? f.name);
    // A file that failed to load (or in its hooks) has no passing tests to show for it.
    if (f.result?.state === 'fail' && (f.tasks ?? []).length === 0) {
      counts.FAIL++;
      lines.push(`  FAIL ${name} (the file failed to load)`);
    }
    walk(name, f);
  }
  process.stdout.write(
    `\nbox-node-sdk ${SDK_VERSION} integration tests against box-server:\n${lines.join('\n')}\n` +
      `box-sdk suite: ${counts.PASS} passed, ${counts.FAIL} failed, ${counts.SKIP} skipped (${files.length} files run, ${excludedFiles().length} excluded as out of scope)\n`,
  );
}

export default function setup(project: TestProject): () => void {
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
  return () => printResults(project);
}
