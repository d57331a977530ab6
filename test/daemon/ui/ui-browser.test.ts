/**
 * The daemon's web page in a real browser (issue 31 acceptance): Debian's chromium through playwright-core,
 * against a real daemon child process and box-server on port 0. Each view is screenshotted under
 * test-output/ui/ (git-ignored); with BOXSYNC_UI_README_SHOTS=1 (`npm run ui-screenshots`) two of them are also
 * copied to docs/images/ for the README.
 *
 * One daemon and one browser for the file; the steps run in order and each waits on what it shows, with a bound.
 */
import { copyFile, mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../support/cli.js';
import { waitFor } from '../../support/wait.js';
import { createHarness, type DaemonRun, type Harness } from '../daemon-harness.js';
import { chromiumMissing, screenshot } from './browser.js';
import { fakeXdgOpen, openLoggedInPage, type LoggedInPage } from './ui-harness.js';

const BOUND_MS = 30_000;
const UPLOAD = /^\/api\/2\.0\/files(\/[^/]+)?\/content$/;

describe.skipIf(chromiumMissing !== null)(`the web page in chromium${chromiumMissing ? ` (skipped: ${chromiumMissing})` : ''}`, () => {
  let h: Harness;
  let run: DaemonRun;
  let browser: LoggedInPage;
  let page: Page;
  let port: number;
  let xdg: Awaited<ReturnType<typeof fakeXdgOpen>>;

  const view = async (name: RegExp): Promise<void> => {
    await page.getByRole('tab', { name }).click();
  };

  beforeAll(async () => {
    h = await createHarness({ config: { safety: { maxDeletes: 2, maxDeleteFraction: 0.1 } } });
    // Five files in one folder, moved away later in one rename: one pass sees the five deletes (the guard step).
    await mkdir(join(h.mirror, 'd'));
    for (let i = 0; i < 5; i++) await writeFile(join(h.mirror, 'd', `f${i}.txt`), `file ${i}`);
    h.web.uploadFile(h.rootId, 'doc.txt', 'base');
    xdg = await fakeXdgOpen(h.dir);
    run = await h.start(xdg.env);
    await waitFor(() => [0, 1, 2, 3, 4].every((i) => h.web.findByPath(`Mirror/d/f${i}.txt`)), { timeoutMs: BOUND_MS, what: 'the five files on Box' });
    browser = await openLoggedInPage(h);
    ({ page, port } = browser);
  });

  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it('logs in with the one-time link (no token left in the address), and the overview shows the pair', async () => {
    expect(page.url()).toBe(`http://127.0.0.1:${port}/`);
    await expect.poll(() => page.title(), { timeout: BOUND_MS }).toBe('boxsync: Up to date');
    await page.getByRole('heading', { name: h.mirror }).waitFor({ timeout: BOUND_MS });
    const pair = page.getByRole('region', { name: `Folder pair ${h.mirror}` });
    await expect.poll(() => pair.textContent(), { timeout: BOUND_MS }).toMatch(/In sync\s*6 files, 1 folder,/);
    expect(await page.locator('link[rel=icon]').getAttribute('href')).toBe('/favicon/up-to-date.svg');
    await page.evaluate('window.notReloaded = true');
    await screenshot(page, 'overview');
    await page.emulateMedia({ colorScheme: 'dark' });
    await screenshot(page, 'overview-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    // Keyboard: the views are tabs reached and opened from the keyboard.
    await page.getByRole('tab', { name: /Problems/ }).focus();
    await page.keyboard.press('Enter');
    await page.getByText('No problems: every item syncs.').waitFor({ timeout: BOUND_MS });
    expect(await page.getByRole('tab', { name: /Problems/ }).getAttribute('aria-selected')).toBe('true');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('region', { name: `Folder pair ${h.mirror}` }).waitFor({ timeout: BOUND_MS });
  });

  it('a change made on Box appears under Recent changes, live, with no reload', async () => {
    await view(/Recent changes/);
    h.web.uploadFile(h.rootId, 'from-box.txt', 'made on Box');
    const row = page.locator('tr.change', { hasText: `${h.mirror}/from-box.txt` }).first();
    await row.waitFor({ timeout: BOUND_MS });
    expect(await page.evaluate('window.notReloaded')).toBe(true);
    expect(await row.textContent()).toMatch(/download/);
    await screenshot(page, 'changes');
    // Filtered by kind: the download stays, another kind hides it; and by folder pair.
    await page.getByLabel('Kind').selectOption('download');
    await row.waitFor({ timeout: BOUND_MS });
    const other = (await page.getByLabel('Kind').locator('option').allTextContents()).find((k) => k !== 'All' && k !== 'download');
    expect(other).toBeDefined();
    await page.getByLabel('Kind').selectOption(other!);
    await row.waitFor({ state: 'detached', timeout: BOUND_MS });
    await page.getByLabel('Kind').selectOption('');
    await page.getByLabel('Folder pair').selectOption({ label: h.mirror });
    await row.waitFor({ timeout: BOUND_MS });
  });

  it('pause and resume from the page; a conflict made meanwhile is resolved from the page (keep mine)', async () => {
    await page.getByRole('button', { name: 'Pause', exact: true }).click();
    await waitFor(async () => (await h.status()).engine.phase === 'paused', { timeoutMs: BOUND_MS, what: 'the daemon to pause' });
    await expect.poll(() => page.title(), { timeout: BOUND_MS }).toBe('boxsync: Paused');
    await screenshot(page, 'paused');
    // Both sides change doc.txt while paused.
    await writeFile(join(h.mirror, 'doc.txt'), 'mine');
    h.web.uploadVersion(h.web.findByPath('Mirror/doc.txt')!.id, "Box's version");
    await page.getByRole('button', { name: 'Resume', exact: true }).click();
    await waitFor(async () => (await h.status()).engine.phase !== 'paused', { timeoutMs: BOUND_MS, what: 'the daemon to resume' });

    await view(/Conflicts/);
    const row = page.locator('tr.conflict', { hasText: `${h.mirror}/doc.txt` });
    await row.waitFor({ timeout: BOUND_MS });
    await screenshot(page, 'conflicts');
    await row.getByRole('button', { name: `Keep this machine's version of ${h.mirror}/doc.txt` }).click();
    await page.getByText('No conflicts.').waitFor({ timeout: BOUND_MS });
    await waitFor(
      async () => {
        const f = h.web.findByPath('Mirror/doc.txt');
        return f !== null && h.web.readFile(f.id).toString() === 'mine';
      },
      { timeoutMs: BOUND_MS, what: 'this machine\'s version on Box' },
    );
  });

  it('a parked item shows its reason; once the cause is gone, Retry clears it', async () => {
    // Box refuses the upload (403: no permission) until the "cause" is fixed on the server.
    h.srv.control.failNext({ method: 'POST', path: UPLOAD, status: 403, count: 1000 });
    const before = Date.now();
    await writeFile(join(h.mirror, 'refused.txt'), 'not allowed yet');
    await view(/Problems/);
    const row = page.locator('tr.problem', { hasText: `${h.mirror}/refused.txt` });
    await row.waitFor({ timeout: BOUND_MS });
    expect(await row.textContent()).toMatch(/403|permission|forbidden|denied/i);
    expect(await page.title()).toBe('boxsync: Needs attention');
    // Since when it fails: the status report's sinceMs (journal failures.first_failed_at_ms), shown in the row.
    const since = (await h.status()).engine.errors.find((e) => e.path === 'refused.txt')?.sinceMs;
    expect(since).toBeGreaterThanOrEqual(before);
    expect(since).toBeLessThanOrEqual(Date.now());
    await expect.poll(() => row.locator('td.since time').getAttribute('datetime'), { timeout: BOUND_MS }).toBe(new Date(since!).toISOString());
    await screenshot(page, 'problems');
    // Open folder: the daemon asks the desktop (xdg-open, a fake one here) to show the item's folder.
    await row.getByRole('button', { name: `Open the folder of ${h.mirror}/refused.txt` }).click();
    await waitFor(async () => (await xdg.calls()).some((c) => c[0] === h.mirror), { timeoutMs: BOUND_MS, what: 'xdg-open on the folder' });
    h.srv.control.clearFaults();
    await row.getByRole('button', { name: `Retry ${h.mirror}/refused.txt` }).click();
    await page.getByText('No problems: every item syncs.').waitFor({ timeout: BOUND_MS });
    await waitFor(() => h.web.findByPath('Mirror/refused.txt'), { timeoutMs: BOUND_MS, what: 'refused.txt on Box' });
  });

  it('a held safety guard is confirmed from the page', async () => {
    await view(/Overview/);
    await rename(join(h.mirror, 'd'), join(h.dir, 'moved-away'));
    const guard = page.getByRole('region', { name: 'A safety guard holds syncing' });
    await guard.waitFor({ timeout: BOUND_MS });
    expect(h.web.findByPath('Mirror/d/f0.txt')).not.toBeNull();
    // What it would delete, listed.
    expect(await guard.getByRole('list', { name: 'What it would delete' }).locator('li').allTextContents()).toEqual(['d']);
    await screenshot(page, 'guard');
    await guard.getByRole('button', { name: 'Confirm' }).click();
    await waitFor(() => h.web.findByPath('Mirror/d') === null, { timeoutMs: BOUND_MS, what: 'the held deletes to run on Box' }).catch(async (e: unknown) => {
      const s = await h.status().catch(() => null);
      throw new Error(`${String(e)}\n--- status ---\n${JSON.stringify(s?.engine ?? null).slice(0, 3000)}\n--- daemon ---\n${run.output().slice(-6000)}`);
    });
    await guard.waitFor({ state: 'detached', timeout: BOUND_MS });
    await expect.poll(() => page.title(), { timeout: BOUND_MS }).toBe('boxsync: Up to date');
    if (process.env['BOXSYNC_UI_README_SHOTS'] === '1') {
      const images = join(repoRoot, 'docs', 'images');
      await mkdir(images, { recursive: true });
      await screenshot(page, 'overview-final');
      await copyFile(join(repoRoot, 'test-output', 'ui', 'overview-final.png'), join(images, 'ui-overview.png'));
      await copyFile(join(repoRoot, 'test-output', 'ui', 'problems.png'), join(images, 'ui-problems.png'));
    }
    // The daemon's log never carried the login token.
    expect(run.output()).not.toMatch(/login\?t=/);
  });

  it('one folder pair is paused and resumed from the page; the bandwidth limit is set and notifications are switched, live', async () => {
    await view(/Overview/);
    const pair = page.getByRole('region', { name: `Folder pair ${h.mirror}` });
    await pair.getByRole('button', { name: `Pause ${h.mirror}` }).click();
    await waitFor(async () => (await h.status()).controls.pausedPairs.includes(h.mirror), { timeoutMs: BOUND_MS, what: 'the pair to pause' });
    // The only pair paused: the daemon as a whole reads paused.
    await expect.poll(() => page.title(), { timeout: BOUND_MS }).toBe('boxsync: Paused');
    await pair.getByRole('button', { name: `Resume ${h.mirror}` }).click();
    await waitFor(async () => (await h.status()).controls.pausedPairs.length === 0, { timeoutMs: BOUND_MS, what: 'the pair to resume' });
    await pair.getByRole('button', { name: `Pause ${h.mirror}` }).waitFor({ timeout: BOUND_MS });

    const controls = page.getByRole('group', { name: 'Controls' });
    await controls.getByLabel(/Bandwidth limit/).fill('2M');
    await controls.getByRole('button', { name: 'Set limit' }).click();
    await waitFor(async () => (await h.status()).controls.bandwidthBytesPerSec === 2 * 1024 * 1024, { timeoutMs: BOUND_MS, what: 'the limit to be set' });
    await controls.getByText('Bandwidth limit (now 2.0 MB/s)').waitFor({ timeout: BOUND_MS });
    const toggle = controls.getByRole('checkbox', { name: 'Desktop notifications' });
    const before = (await h.status()).controls.notifications.on;
    expect(await toggle.isChecked()).toBe(before);
    await toggle.click();
    await waitFor(async () => (await h.status()).controls.notifications.on === !before, { timeoutMs: BOUND_MS, what: 'notifications to switch' });
    await expect.poll(() => toggle.isChecked(), { timeout: BOUND_MS }).toBe(!before);
    await screenshot(page, 'controls');
    await controls.getByLabel(/Bandwidth limit/).fill('off');
    await controls.getByRole('button', { name: 'Set limit' }).click();
    await controls.getByText('Bandwidth limit (now off)').waitFor({ timeout: BOUND_MS });
    expect((await h.status()).controls.bandwidthBytesPerSec).toBeNull();
  });
});
