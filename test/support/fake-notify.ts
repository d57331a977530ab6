/**
 * A `notify-send` for daemon tests: a script (a real child process of the daemon) that records its arguments, one
 * JSON array per line. `env` puts it first on PATH and fakes a desktop session (DISPLAY), so the notifier is on.
 */
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export async function fakeNotifySend(dir: string): Promise<{ env: NodeJS.ProcessEnv; calls: () => Promise<string[][]> }> {
  const bin = join(dir, 'fake-bin');
  const log = join(dir, 'notify.log');
  await mkdir(bin, { recursive: true });
  // One JSON array of the arguments per line.
  await writeFile(join(bin, 'notify-send'), `#!/usr/bin/env node\nrequire('fs').appendFileSync(${JSON.stringify(log)}, JSON.stringify(process.argv.slice(2)) + '\\n');\n`);
  await chmod(join(bin, 'notify-send'), 0o755);
  return {
    env: { PATH: `${bin}:${process.env.PATH ?? ''}`, DISPLAY: ':99' },
    calls: async () =>
      (await readFile(log, 'utf8').catch(() => ''))
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as string[]),
  };
}
