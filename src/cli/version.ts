/**
 * The version `boxsync --version` prints: this package's own (read from package.json beside src/ or dist/, so
 * it never drifts from what npm installed), with Node's version and the platform, which a bug report needs.
 */
import { readFileSync } from 'node:fs';

export function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

export function versionText(): string {
  return `boxsync ${packageVersion()} (Node ${process.version}, ${process.platform}-${process.arch})`;
}
