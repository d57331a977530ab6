/**
 * The web page's Selective sync view in a real browser (issue 31 acceptance): Debian's chromium through
 * playwright-core, a real daemon child process and box-server on port 0. A folder is excluded from the tree (its
 * local copy goes to the local trash, `status` says not selected) and included again (downloaded again), all
 * from the keyboard or the mouse, and nothing is deleted on Box. Its API lists only folders inside the pairs, a
 * page at a time. The screenshot is test-output/ui/selective.png.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { waitFor } from '../../support/wait.js';
import { createHarness, type Harness } from '../daemon-harness.js';
import { chromiumMissing, screenshot } from './browser.js';
import { http, login, openLoggedInPage, type LoggedInPage } from './ui-harness.js';

const BOUND_MS = 60_000;
/** A Box name that is HTML: the page must show it as text. */
const HTML_NAME = '<img src=x onerror=alert(1)>';

describe.skipIf(chromiumMissing !== null)(`the Selective sync view in chromium${chromiumMissing ? ` (skipped: ${chromiumMissing})` : ''}`, () => {
  let h: Harness;
  let browser: LoggedInPage;
  let page: Page;
  let port: number;
  let photosId: string;

  beforeAll(async () => {
    h = await createHarness();
    const photos = h.web.createFolder(h.rootId, 'Photos');
    photosId = photos.id;
    h.web.uploadFile(photos.id, 'a.jpg', 'a photo');
    const docs = h.web.createFolder(h.rootId, 'Docs');
    h.web.createFolder(docs.id, 'Old');
    h.web.createFolder(h.rootId, HTML_NAME);
    // More subfolders than the page asks for at once (200): the view shows a page, then "Show more".
    const many = h.web.createFolder(h.rootId, 'Many');
    for (let i = 0; i < 201; i++) h.web.createFolder(many.id, `m${String(i).padStart(3, '0')}`);
    await h.start();
    await waitFor(() => existsSync(join(h.mirror, 'Photos', 'a.jpg')) && existsSync(join(h.mirror, 'Docs', 'Old')) && existsSync(join(h.mirror, 'Many', 'm200')), { timeoutMs: BOUND_MS, what: 'the first sync' });
    browser = await openLoggedInPage(h);
    ({ page, port } = browser);
  });

  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it('shows the Box folder tree, listed when a folder is expanded, with sizes and names as text', async () => {
    await page.getByRole('tab', { name: /Selective sync/ }).click();
    const pair = page.getByRole('region', { name: `Box folders of ${h.mirror}` });
    // Nothing is listed before the pair is expanded (lazy).
    expect(await pair.getByRole('checkbox').count()).toBe(0);
    // From the keyboard: the expand button is focused and pressed with Enter.
    await pair.getByRole('button', { name: `Expand ${h.mirror}` }).focus();
    await page.keyboard.press('Enter');
    const photos = pair.getByRole('checkbox', { name: 'Sync Photos' });
    await photos.waitFor({ timeout: BOUND_MS });
    expect(await photos.isChecked()).toBe(true);
    expect(await pair.locator('li.folder', { hasText: 'Photos/' }).textContent()).toMatch(/7 B/);
    // Docs is listed, its subfolder not until Docs is expanded.
    expect(await pair.getByRole('checkbox', { name: 'Sync Old' }).count()).toBe(0);
    await pair.getByRole('button', { name: 'Expand Docs' }).click();
    await pair.getByRole('checkbox', { name: 'Sync Old' }).waitFor({ timeout: BOUND_MS });
    // A name that is HTML is shown as text: no element made of it.
    expect(await pair.getByText(`${HTML_NAME}/`, { exact: true }).count()).toBe(1);
    expect(await page.locator('img').count()).toBe(0);
    await screenshot(page, 'selective');
    // A big folder comes a page at a time.
    await pair.getByRole('button', { name: 'Expand Many' }).click();
    await pair.getByText('200 of 201 folders shown.').waitFor({ timeout: BOUND_MS });
    expect(await pair.getByRole('checkbox', { name: /^Sync m\d{3}$/ }).count()).toBe(200);
    await pair.getByRole('button', { name: 'Show more' }).click();
    await pair.getByRole('checkbox', { name: 'Sync m200' }).waitFor({ timeout: BOUND_MS });
    expect(await pair.getByRole('checkbox', { name: /^Sync m\d{3}$/ }).count()).toBe(201);
    expect(await pair.getByRole('button', { name: 'Show more' }).count()).toBe(0);
    await pair.getByRole('button', { name: 'Collapse Many' }).click();
  });

  it('excludes a folder from the tree (local copy to the local trash, not selected, nothing deleted on Box) and includes it again', async () => {
    h.srv.control.clearRequests();
    const pair = page.getByRole('region', { name: `Box folders of ${h.mirror}` });
    const photos = pair.getByRole('checkbox', { name: 'Sync Photos' });
    await photos.click();
    const said = page.getByRole('alert');
    await said.filter({ hasText: 'Photos/ is now in folders[0].selective.unselected' }).waitFor({ timeout: BOUND_MS });
    expect(await said.textContent()).toMatch(/moved to the local trash/);
    expect(existsSync(join(h.mirror, 'Photos'))).toBe(false);
    await expect.poll(() => photos.isChecked(), { timeout: BOUND_MS }).toBe(false);
    await expect.poll(() => pair.locator('li.folder', { hasText: 'Photos/' }).getAttribute('data-state'), { timeout: BOUND_MS }).toBe('not synced');
    // The pair is now "partly" synced; Docs stays synced.
    expect(await pair.getByRole('checkbox', { name: 'Sync Docs' }).isChecked()).toBe(true);
    const one = await runCli(['status', '--socket', h.socketPath, join(h.mirror, 'Photos', 'a.jpg')]);
    expect(one.stdout).toMatch(/not synced: not selected/);
    await screenshot(page, 'selective-excluded');

    // Included again, from the keyboard (Space on the focused checkbox): downloaded again.
    await photos.focus();
    await page.keyboard.press('Space');
    await said.filter({ hasText: 'Photos/ is selected again' }).waitFor({ timeout: BOUND_MS });
    await waitFor(async () => (await readFile(join(h.mirror, 'Photos', 'a.jpg'), 'utf8').catch(() => null)) === 'a photo', { timeoutMs: BOUND_MS, what: 'Photos to come back from Box' });
    await expect.poll(() => photos.isChecked(), { timeout: BOUND_MS }).toBe(true);

    // Nothing was deleted on Box: no DELETE request at all, and the folder is still active there.
    expect(h.srv.control.requests().filter((r) => r.method === 'DELETE')).toEqual([]);
    expect(h.web.getItem('folder', photosId)?.['item_status']).toBe('active');
  });

  it('its API lists only folders inside the pairs, a page at a time, and changes only inside them', async () => {
    const cookie = await login(h, port);
    const origin = `http://127.0.0.1:${port}`;
    const tree = (path: string, q = ''): ReturnType<typeof http> => http(port, `/api/selective/tree?path=${encodeURIComponent(path)}${q}`, { cookie });
    const page1 = await tree(h.mirror, '&offset=1&limit=1');
    expect(page1.status).toBe(200);
    const body = JSON.parse(page1.body) as { total: number; offset: number; folders: { name: string }[] };
    expect(body.total).toBe(4);
    expect(body.offset).toBe(1);
    expect(body.folders).toHaveLength(1);
    expect((await tree(h.dir)).status).toBe(403);
    expect((await tree('/etc')).status).toBe(403);
    expect((await tree(join(h.mirror, '..', 'state'))).status).toBe(403);
    expect((await tree('relative/path')).status).toBe(400);
    expect((await tree(join(h.mirror, 'Nope'))).status).toBe(409);
    const outside = await http(port, '/api/selective', { cookie, origin, json: { action: 'exclude', path: h.dir } });
    expect(outside.status).toBe(403);
    // No cookie: 401; another origin: 403.
    expect((await http(port, `/api/selective/tree?path=${encodeURIComponent(h.mirror)}`)).status).toBe(401);
    expect((await http(port, '/api/selective', { cookie, origin: 'http://evil.example', json: { action: 'exclude', path: join(h.mirror, 'Docs') } })).status).toBe(403);
    expect(existsSync(join(h.mirror, 'Docs', 'Old'))).toBe(true);

    // A folder not kept here (no merge base) is still listed: found on Box from the nearest synced folder above.
    const ex = await http(port, '/api/selective', { cookie, origin, json: { action: 'exclude', path: join(h.mirror, 'Docs') } });
    expect(ex.status, ex.body).toBe(200);
    expect(JSON.parse(ex.body)).toMatchObject({ outcome: 'applied' });
    expect(existsSync(join(h.mirror, 'Docs'))).toBe(false);
    const docs = await tree(join(h.mirror, 'Docs'));
    expect(docs.status, docs.body).toBe(200);
    expect(JSON.parse(docs.body)).toMatchObject({ state: 'not synced', total: 1, folders: [{ name: 'Old', path: join(h.mirror, 'Docs', 'Old'), state: 'not synced' }] });
    expect(JSON.parse((await tree(h.mirror)).body)).toMatchObject({ state: 'partly' });
    expect(h.srv.control.requests().filter((r) => r.method === 'DELETE')).toEqual([]);
  });
});
