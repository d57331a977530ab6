#!/usr/bin/env node
// Entry point. Runs the compiled CLI when it exists (an installed package),
// otherwise the TypeScript sources through tsx (a development checkout).
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const compiled = join(root, 'dist', 'cli', 'main.js');
if (existsSync(compiled) && !process.env.BOXSYNC_FROM_SOURCE) {
  await import(pathToFileURL(compiled).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(join(root, 'src', 'cli', 'main.ts')).href);
}
