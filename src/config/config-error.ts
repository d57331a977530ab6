/**
 * ConfigError: the configuration file is missing, unreadable, not JSON, or fails validation.
 *
 * A SyncError with code `config_invalid` and disposition `fatal` (exit code 2). The message always starts with
 * `config error in FILE:` and then names each offending key in dotted/indexed form
 * (`folders[0].localPath: expected an absolute path`), so the user can go straight to the line. Nothing has been
 * touched when it is thrown: no lock taken, no journal opened, no file synced.
 */
import { SyncError } from '../core/errors.js';

export interface ConfigProblem {
  /** Dotted/indexed key, e.g. `folders[0].localPath`; '' for the file as a whole. */
  readonly key: string;
  readonly message: string;
}

export class ConfigError extends SyncError {
  readonly file: string;
  readonly problems: readonly ConfigProblem[];

  constructor(file: string, problems: readonly ConfigProblem[]) {
    const lines = problems.map((p) => (p.key === '' ? p.message : `${p.key}: ${p.message}`));
    super({
      code: 'config_invalid',
      disposition: 'fatal',
      message: `config error in ${file}: ${lines.join('; ')}. Nothing was synced; fix the file and run again.`,
      details: { file, problems },
    });
    this.name = 'ConfigError';
    this.file = file;
    this.problems = problems;
  }
}

export function isConfigError(e: unknown): e is ConfigError {
  return e instanceof ConfigError;
}
