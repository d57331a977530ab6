/**
 * `boxsync selective` (issue 27 point 2): the interactive tree picker (src/cli/selective-picker.ts), driven with
 * @inquirer/testing against a real box-server on port 0 and the real Box client from the config: the first screen
 * lists nothing from Box, a folder is listed only when expanded (the server's request log shows it), the keys
 * move, toggle and quit, `a` shows the change set and applies it through the same door as `selective
 * exclude|include` (a real sync, real journal, real temp dirs). The real CLI runs on a pseudo-terminal (util-linux
 * `script`) with keys typed into it, and off a terminal, where it prints the list.
 */
import { render } from '@inquirer/testing';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { adapterForConfig } from '../../src/cli/account-tools.js';
import { changeSet, pickerConfigFor, runSelectivePicker, selectivePicker, toggleSelection, type PickerConfig } from '../../src/cli/selective-picker.js';
import { loadConfig } from '../../src/config/index.js';
import { asRemoteId } from '../../src/core/model.js';
import { cliEntry, repoRoot, runCli } from '../support/cli.js';
import { waitFor } from '../support/wait.js';
import { createHarness } from '../daemon/daemon-harness.js';
import { exists, explain, listTree, startSyncEnv, writeRequests, writeText, type SyncEnv } from './sync-harness.js';

type Env = SyncEnv & { remoteRootId: string };
let e: Env | undefined;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
  await e?.close();
  e = undefined;
});

/** Mirror/ on Box: Archive/ (16 B, with sub/), Work/ (5 B), Old/ (3 B), and a folder whose name holds an escape. */
async function boxEnv(folder: Record<string, unknown> = {}): Promise<{ env: Env; ids: { archive: string; work: string } }> {
  const env = await startSyncEnv();
  e = env;
  const archive = env.web.createFolder(env.remoteRootId, 'Archive');
  env.web.uploadFile(archive.id, 'old.txt', 'old report\n');
  env.web.uploadFile(env.web.createFolder(archive.id, 'sub').id, 'deep.txt', 'deep\n');
  const work = env.web.createFolder(env.remoteRootId, 'Work');
  env.web.uploadFile(work.id, 'w.txt', 'work\n');
  env.web.uploadFile(env.web.createFolder(env.remoteRootId, 'Old').id, 'o.txt', 'o\n\n');
  env.web.createFolder(env.remoteRootId, 'Zz\u009b2Jbad');
  await env.writeConfig({ folder });
  return { env, ids: { archive: archive.id, work: work.id } };
}

/** The picker's config from the env's real config file and the real Box client (as runSelectivePicker builds it). */
async function pickerConfig(env: Env): Promise<PickerConfig> {
  const config = await loadConfig({ path: env.configFile });
  const adapter = adapterForConfig(config);
  closers.push(() => adapter.close());
  return pickerConfigFor(config, adapter);
}

/** The whole command as a prompt: runSelectivePicker on the env's config, on @inquirer/testing's streams. */
const runner = (env: Env, report: string[]): Parameters<typeof render<number, object>>[0] => (_config, context) =>
  runSelectivePicker(env.configFile, { ...context, report: (line) => void report.push(line) });

/** The whole command on the env, with Archive toggled off in the picker (nothing applied yet). */
async function archiveToggled(env: Env): Promise<{ s: Screen; report: string[] }> {
  const report: string[] = [];
  const s = await render(runner(env, report), {});
  s.events.keypress('right');
  await screenShows(s, /Work\//, 'the top folders');
  s.events.keypress('down');
  s.events.keypress('space');
  await screenShows(s, /❯ +▸ \[ \] Archive\/ {2}16 B {2}\(to exclude\)/, 'Archive to exclude');
  return { s, report };
}

const listed = (env: Env): string[] =>
  env.srv.control
    .requests()
    .filter((r) => r.method === 'GET' && /\/folders\/[^/]+\/items$/.test(r.path))
    .map((r) => /\/folders\/([^/]+)\/items$/.exec(r.path)![1]!);

/**
 * The real CLI as a child on a pseudo-terminal (util-linux `script`, as test/cli/names-escaped.test.ts uses it):
 * keys written to its stdin reach the CLI as typed; `shows` waits (bounded) for its output to match.
 */
function onTty(args: readonly string[]): { write(keys: string): void; shows(re: RegExp, what: string): Promise<void>; exit: Promise<{ code: number | null; output: string }> } {
  const tsx = pathToFileURL(createRequire(join(repoRoot, 'package.json')).resolve('tsx')).href;
  const quote = (x: string): string => `'${x.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, '--import', tsx, cliEntry, ...args].map(quote).join(' ');
  const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], {
    cwd: repoRoot,
    env: { ...process.env, BOXSYNC_LOG_LEVEL: 'warn', COLUMNS: '200', LINES: '40', TERM: 'xterm-256color' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exit = new Promise<{ code: number | null; output: string }>((res, rej) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      rej(new Error(`boxsync selective on a terminal did not exit in time:\n${output}`));
    }, 150_000);
    child.on('error', rej);
    child.on('close', (code) => {
      clearTimeout(timer);
      child.stdin.end();
      res({ code, output });
    });
  });
  return {
    write: (keys) => void child.stdin.write(keys),
    shows: async (re, what) => {
      await waitFor(() => re.test(output), { timeoutMs: 60_000, what }).catch((err: unknown) => {
        throw new Error(`${String(err)}; output so far:\n${output}`);
      });
    },
    exit,
  };
}

type Screen = Awaited<ReturnType<typeof render>>;
const screenShows = (s: Screen, re: RegExp, what: string): Promise<string> =>
  waitFor(() => (re.test(s.getScreen()) ? s.getScreen() : false), { timeoutMs: 20_000, what }).catch((err: unknown) => {
    throw new Error(`${String(err)}; the screen now:\n${s.getScreen()}`);
  });

describe('selective picker', () => {
  it('opens with no listing from Box, lists one folder per expand (once), and escapes names', async () => {
    const { env, ids } = await boxEnv();
    const cfg = await pickerConfig(env);
    env.srv.control.clearRequests();
    const s = await render(selectivePicker, cfg);
    // The first screen: the pair, unexpanded, and nothing listed from Box.
    expect(s.getScreen()).toContain(`❯ ▸ [x] ${env.mirror}`);
    expect(s.getScreen()).toMatch(/space toggle {2}a apply {2}q quit/);
    expect(listed(env)).toEqual([]);
    // Its size comes after, from one GET of the folder, not a listing.
    await screenShows(s, new RegExp(`${env.mirror.replace(/[/.]/g, '\\$&')} {2}\\d+ B`), 'the pair size');
    expect(listed(env)).toEqual([]);

    s.events.keypress('right');
    const first = await screenShows(s, /Work\//, 'the top folders after expanding');
    expect(listed(env)).toEqual([env.remoteRootId]);
    expect(first).toMatch(/▸ \[x\] Archive\/ {2}16 B/);
    expect(first).toMatch(/▸ \[x\] Old\/ {2}3 B/);
    expect(first).toMatch(/▸ \[x\] Work\/ {2}5 B/);
    // The control characters of a Box name are shown as escapes, never sent to the terminal.
    expect(first).toContain('Zz\\x9b2Jbad/');
    expect(s.getScreen({ raw: true })).not.toContain('\u009b');

    // down to Archive (j), expand it: only Archive is listed.
    s.events.keypress('j');
    s.events.keypress('right');
    await screenShows(s, /sub\//, 'Archive/sub after expanding Archive');
    expect(listed(env)).toEqual([env.remoteRootId, ids.archive]);
    // Collapse (left) and expand (enter) again: from what was listed, no new call.
    s.events.keypress('left');
    await screenShows(s, /^(?![\s\S]*sub\/)/, 'Archive collapsed');
    s.events.keypress('enter');
    await screenShows(s, /sub\//, 'Archive expanded again');
    // k moves up to the pair; left on a closed folder goes to its parent.
    s.events.keypress('down');
    await screenShows(s, /❯ +▸ \[x\] sub\//, 'the cursor on sub');
    s.events.keypress('left');
    await screenShows(s, /❯ +▾ \[x\] Archive\//, 'the cursor back on Archive');
    expect(listed(env)).toEqual([env.remoteRootId, ids.archive]);
    s.events.keypress('q');
    await expect(s.answer).resolves.toEqual({ apply: false });
  });

  it('space toggles, a shows the change set with sizes, y returns it; rules for folders inside unsynced ones', async () => {
    const { env } = await boxEnv({ selective: { unselected: ['Old'] } });
    const cfg = await pickerConfig(env);
    const s = await render(selectivePicker, cfg);
    expect(s.getScreen()).toContain(`▸ [-] ${env.mirror}`);
    s.events.keypress('right');
    await screenShows(s, /\[ \] Old\//, 'Old not synced');
    // The pair itself cannot be toggled.
    s.events.keypress('space');
    await screenShows(s, /remove the pair from the config/, 'the message for the pair');
    // Archive: excluded (and its choices below follow it).
    s.events.keypress('down');
    s.events.keypress('space');
    await screenShows(s, /❯ +▸ \[ \] Archive\/ {2}16 B {2}\(to exclude\)/, 'Archive to exclude');
    // Inside Archive, nothing can be toggled while Archive is not synced.
    s.events.keypress('right');
    await screenShows(s, /sub\//, 'Archive/sub');
    s.events.keypress('down');
    s.events.keypress('space');
    await screenShows(s, /Archive\/ is not synced: select it to choose the folders inside it/, 'the message inside Archive');
    // Old: included; a folder inside it waits until that is applied.
    s.events.keypress('down');
    s.events.keypress('space');
    await screenShows(s, /❯ +▸ \[x\] Old\/ {2}3 B {2}\(to include\)/, 'Old to include');
    // Toggled twice is no change: Work.
    s.events.keypress('down');
    s.events.keypress('space');
    await screenShows(s, /\[ \] Work\/ {2}5 B {2}\(to exclude\)/, 'Work to exclude');
    s.events.keypress('space');
    await screenShows(s, /❯ +▸ \[x\] Work\/ {2}5 B$/m, 'Work as it was');

    s.events.keypress('a');
    const confirm = await screenShows(s, /Apply these changes\?/, 'the confirmation');
    expect(confirm).toMatch(new RegExp(`exclude +16 B +${join(env.mirror, 'Archive').replace(/[/.]/g, '\\$&')}/ +\\(its local copy goes to the local trash; Box keeps it\\)`));
    expect(confirm).toMatch(new RegExp(`include +3 B +${join(env.mirror, 'Old').replace(/[/.]/g, '\\$&')}/ +\\(downloaded from Box\\)`));
    expect(confirm).toContain('16 B freed here, 3 B to download.');
    expect(confirm).not.toContain('Work');
    // n goes back to the tree with the choices kept; a again, then y.
    s.events.keypress('n');
    await screenShows(s, /\(to include\)/, 'back in the tree');
    s.events.keypress('a');
    await screenShows(s, /Apply these changes\?/, 'the confirmation again');
    s.events.keypress('y');
    await expect(s.answer).resolves.toEqual({
      apply: true,
      changes: [
        { pair: 0, action: 'exclude', rel: 'Archive', path: join(env.mirror, 'Archive'), sizeBytes: 16 },
        { pair: 0, action: 'include', rel: 'Old', path: join(env.mirror, 'Old'), sizeBytes: 3 },
      ],
    });
  });

  it('a folder inside one that comes back waits until that is applied; a with no change says so; a listing error', async () => {
    const { env, ids } = await boxEnv({ selective: { unselected: ['Archive'] } });
    const s = await render(selectivePicker, await pickerConfig(env));
    s.events.keypress('a');
    await screenShows(s, /nothing to apply: the selection is as it was/, 'nothing to apply');
    s.events.keypress('right');
    await screenShows(s, /\[ \] Archive\//, 'the top folders');
    s.events.keypress('down');
    s.events.keypress('space');
    s.events.keypress('right');
    await screenShows(s, /sub\//, 'Archive/sub');
    s.events.keypress('down');
    s.events.keypress('space');
    await screenShows(s, /Archive\/ comes back when this change is applied: choose the folders inside it after that/, 'the message');
    // A folder Box cannot list (trashed meanwhile) says why on its row; right lists it again once Box has it back.
    env.web.trash('folder', ids.work);
    s.events.keypress('down');
    s.events.keypress('right');
    await screenShows(s, /❯ +\[x\] Old\/ {2}3 B {2}\(no subfolders\)/, 'Old listed: nothing in it');
    s.events.keypress('down');
    s.events.keypress('right');
    await screenShows(s, /❯ +▸ \[x\] Work\/ {2}5 B {2}\(could not list: .+; right to retry\)/, 'the listing error on Work');
    env.web.restore('folder', ids.work);
    s.events.keypress('right');
    await screenShows(s, /❯ {5}\[x\] Work\/ {2}5 B {2}\(no subfolders\)/, 'Work listed on retry');
    s.events.keypress('escape');
    await expect(s.answer).resolves.toEqual({ apply: false });
  });

  it('excluding a folder drops the choices made below it in this session, keeps the config\'s; the change set is the difference', () => {
    const original = new Set(['A/x']);
    let working: Set<string> = new Set(original);
    const step = (rel: string): Set<string> => {
      const r = toggleSelection(original, working, rel);
      if (!('working' in r)) throw new Error(r.message);
      return (working = r.working);
    };
    step('A/y');
    expect([...step('A')].sort()).toEqual(['A', 'A/x']);
    expect(toggleSelection(original, working, 'A/z')).toEqual({ message: 'A/ is not synced: select it to choose the folders inside it' });
    expect([...step('A')]).toEqual(['A/x']);
    step('B');
    step('A/x');
    const pairs = [{ index: 3, localPath: '/m', remoteId: asRemoteId('1'), unselected: [...original] }];
    expect(changeSet(pairs, [working], (_p, rel) => rel.length)).toEqual([
      { pair: 3, action: 'exclude', rel: 'B', path: '/m/B', sizeBytes: 1 },
      { pair: 3, action: 'include', rel: 'A/x', path: '/m/A/x', sizeBytes: 3 },
    ]);
  });

  it('q, Esc and Ctrl-C change nothing: the config is as it was and nothing reached Box', async () => {
    const { env } = await boxEnv();
    const before = await readFile(env.configFile, 'utf8');
    for (const quit of [{ name: 'q' }, { name: 'escape' }, { name: 'c', ctrl: true }]) {
      env.srv.control.clearRequests();
      const { s, report } = await archiveToggled(env);
      s.events.keypress(quit);
      if (quit.ctrl === true) {
        // @inquirer/core ends the prompt with ExitPromptError; the runner says so and exits 130.
        await expect(s.answer).resolves.toBe(130);
      } else await expect(s.answer).resolves.toBe(0);
      expect(report).toEqual(['Nothing changed.']);
      expect(await readFile(env.configFile, 'utf8')).toBe(before);
      expect(writeRequests(env.srv)).toEqual([]);
    }
  });

  it('apply goes through selective exclude: synced first, the local copy to the local trash, nothing deleted on Box', async () => {
    const { env, ids } = await boxEnv();
    await env.syncOk();
    expect(await exists(join(env.mirror, 'Archive', 'sub', 'deep.txt'))).toBe(true);
    // An edit here that Box does not have yet: the exclude uploads it before it frees the folder.
    await writeText(join(env.mirror, 'Archive', 'sub', 'deep.txt'), 'deep, edited here\n');
    env.srv.control.clearRequests();
    const { s, report } = await archiveToggled(env);
    s.events.keypress('a');
    await screenShows(s, /Apply these changes\?/, 'the confirmation');
    s.events.keypress('enter');
    // Bounded by the test's timeout: the exclude runs two syncs.
    expect(await s.answer, report.join('\n')).toBe(0);
    expect(report).toEqual([`Excluding ${join(env.mirror, 'Archive')}/ ...`]);
    expect(await exists(join(env.mirror, 'Archive'))).toBe(false);
    expect((await listTree(join(env.stateDir, 'trash'))).some((p) => p.endsWith('Archive/sub/deep.txt'))).toBe(true);
    const cfg = JSON.parse(await readFile(env.configFile, 'utf8')) as { folders: { selective: { unselected: string[] } }[] };
    expect(cfg.folders[0]!.selective.unselected).toEqual(['Archive']);
    expect(writeRequests(env.srv).filter((r) => r.method === 'DELETE')).toEqual([]);
    expect(env.web.getItem('folder', ids.archive)?.['item_status']).toBe('active');
    const deep = env.web.findByPath('/Mirror/Archive/sub/deep.txt');
    expect(deep && env.web.readFile(deep.id).toString()).toBe('deep, edited here\n');
  }, 180_000);

  it('on a terminal (util-linux `script`), the real CLI opens the picker: expand, toggle, a, y applies; q changes nothing', async () => {
    const { env } = await boxEnv();
    await env.syncOk();
    const before = await readFile(env.configFile, 'utf8');
    // q: nothing changed, exit 0.
    const quit = onTty(['selective', '--config', env.configFile]);
    await quit.shows(/space toggle/, 'the first screen');
    quit.write('\u001b[C'); // right
    await quit.shows(/Work\//, 'the top folders');
    quit.write('j ');
    await quit.shows(/\(to exclude\)/, 'Archive to exclude');
    quit.write('q');
    const q = await quit.exit;
    expect(q.code, q.output).toBe(0);
    expect(q.output).toContain('Nothing changed.');
    expect(await readFile(env.configFile, 'utf8')).toBe(before);
    expect(await exists(join(env.mirror, 'Archive'))).toBe(true);

    // right, j, space, a, y: Archive excluded by the real command, in the same child.
    const apply = onTty(['selective', '--config', env.configFile]);
    await apply.shows(/space toggle/, 'the first screen');
    apply.write('\u001b[C');
    await apply.shows(/Work\//, 'the top folders');
    apply.write('j ');
    await apply.shows(/\(to exclude\)/, 'Archive to exclude');
    apply.write('a');
    await apply.shows(/Apply these changes\?/, 'the confirmation');
    apply.write('y');
    const a = await apply.exit;
    expect(a.code, a.output).toBe(0);
    expect(a.output).toContain('Archive/ is no longer kept on this disk; Box keeps it.');
    expect(await exists(join(env.mirror, 'Archive'))).toBe(false);
    expect(writeRequests(env.srv).filter((r) => r.method === 'DELETE')).toEqual([]);
  }, 180_000);

  it('with the daemon running, the picker\'s change goes to the daemon (the route of selective exclude): applied at once, no Box delete', async () => {
    const h = await createHarness();
    closers.push(() => h.close());
    const archive = h.web.createFolder(h.rootId, 'Archive');
    h.web.uploadFile(archive.id, 'old.txt', 'old report\n');
    await h.start();
    const old = join(h.mirror, 'Archive', 'old.txt');
    await waitFor(() => exists(old), { timeoutMs: 30_000, what: 'Archive to be downloaded' });
    h.srv.control.clearRequests();
    const picker = onTty(['selective', '--config', h.configFile]);
    await picker.shows(/space toggle/, 'the first screen');
    picker.write('\u001b[C');
    await picker.shows(/Archive\//, 'the top folders');
    picker.write('j a');
    await picker.shows(/Apply these changes\?/, 'the confirmation');
    picker.write('y');
    const r = await picker.exit;
    expect(r.code, r.output).toBe(0);
    expect(r.output).toMatch(/The daemon \(pid \d+\) applies this now/);
    expect(r.output).toMatch(/the daemon applied it at once/);
    expect(await exists(old)).toBe(false);
    const cfg = JSON.parse(await readFile(h.configFile, 'utf8')) as { folders: { selective: { unselected: string[] } }[] };
    expect(cfg.folders[0]!.selective.unselected).toEqual(['Archive']);
    expect(h.srv.control.requests().filter((x) => x.method === 'DELETE')).toEqual([]);
  }, 180_000);

  it('off a terminal, `boxsync selective` prints the list and a hint, exit 0', async () => {
    const { env } = await boxEnv({ selective: { unselected: ['Old'] } });
    const r = await runCli(['selective', '--config', env.configFile], { env: { BOXSYNC_LOG_LEVEL: 'warn' }, timeoutMs: 90_000 });
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout).toMatch(/\(Box folder \d+; partly\)/);
    expect(r.stdout).toMatch(/not synced\s+3 B\s+Old\//);
    expect(r.stdout).toMatch(/synced\s+16 B\s+Archive\//);
    expect(r.stderr).toContain('not a terminal, so no picker');
    // -c written after a subcommand still reaches it.
    const list = await runCli(['selective', 'list', '-c', env.configFile], { env: { BOXSYNC_LOG_LEVEL: 'warn' }, timeoutMs: 90_000 });
    expect(list.code, explain(list)).toBe(0);
    expect(list.stdout).toMatch(/not synced\s+3 B\s+Old\//);
  });
});
