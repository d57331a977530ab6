/**
 * A `notify-send` for daemon tests (test/support/fake-command.ts: a real child process of the daemon that records its
 * arguments). `env` puts it first on PATH and fakes a desktop session (DISPLAY), so the notifier is on.
 */
import { fakeCommand, type FakeCommand } from './fake-command.js';

export async function fakeNotifySend(dir: string): Promise<FakeCommand> {
  const fake = await fakeCommand(dir, 'notify-send');
  return { env: { ...fake.env, DISPLAY: ':99' }, calls: () => fake.calls() };
}
