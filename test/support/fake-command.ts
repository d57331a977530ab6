/**
 * A fake desktop command (notify-send, xdg-open) first on PATH: a real child process that records its
 * arguments, one JSON array a line, and does nothing else.
 */
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface FakeCommand {
  /** PATH with the fake first. */
  readonly env: NodeJS.ProcessEnv;
  /** The arguments of each call so far. */
  calls(): Promise<string[][]>;
}

export async function fakeCommand(dir: string, name: string): Promise<FakeCommand> {
  const bin = join(dir, `fake-${name}-bin`);
  const log = join(dir, `${name}.log`);
  await mkdir(bin, { recursive: true });
  await writeFile(join(bin, name), `#!/usr/bin/env node\nrequire('fs').appendFileSync(${JSON.stringify(log)}, JSON.stringify(process.argv.slice(2)) + '\\n');\n`);
  await chmod(join(bin, name), 0o755);
  return {
    env: { PATH: `${bin}:${process.env['PATH'] ?? ''}` },
    calls: async () =>
      (await readFile(log, 'utf8').catch(() => ''))
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as string[]),
  };
}
