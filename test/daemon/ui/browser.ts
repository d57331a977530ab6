/**
 * Debian's chromium driven by playwright-core (nothing downloads a browser): headless, no sandbox (CI runs as
 * root), no network of its own, a fresh profile per launch. When /usr/bin/chromium is missing the browser tests
 * skip and say why (`.ci/run` installs it).
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { repoRoot } from '../../support/cli.js';

export const CHROMIUM = '/usr/bin/chromium';
export const chromiumMissing: string | null = existsSync(CHROMIUM) ? null : `${CHROMIUM} is not installed (apt-get install chromium; .ci/run does)`;

/** Screenshots of each view; git-ignored. */
export const SHOTS_DIR = join(repoRoot, 'test-output', 'ui');

export async function launchChromium(profileDir: string): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1200, height: 800 },
    timeout: 60_000,
  });
}

export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(SHOTS_DIR, { recursive: true });
  const file = join(SHOTS_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
