import type { z } from 'zod';
import type { ConfigProblem } from './config-error.js';

/** `['folders', 0, 'localPath']` -> `folders[0].localPath`. */
export function keyOf(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

/**
 * Zod issues as problems that name the key. An unknown key becomes one problem per key (so a typo like
 * `localpath` is named exactly); a missing key reads "is required" rather than "received undefined".
 */
export function problemsFromIssues(issues: readonly z.core.$ZodIssue[], prefix: readonly PropertyKey[] = []): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...issue.path];
    switch (issue.code) {
      case 'unrecognized_keys':
        for (const k of issue.keys) out.push({ key: keyOf([...path, k]), message: 'unknown key (see config/README.md for the keys)' });
        break;
      case 'invalid_type':
        out.push({
          key: keyOf(path),
          message: issue.message.endsWith('received undefined') ? `is required (expected ${issue.expected})` : lower(issue.message),
        });
        break;
      default:
        out.push({ key: keyOf(path), message: lower(issue.message) });
    }
  }
  return out;
}

function lower(message: string): string {
  return message.replace(/^Invalid input: /, '').replace(/^Invalid option: /, '').replace(/^./, (c) => c.toLowerCase());
}
