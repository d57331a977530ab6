/**
 * The web page's first paint with a large mirror (issue 31 point 4): a journal of BENCH_UI_FILES (default
 * 100,000) synced files built by the journal fixture, the real daemon on it (from the sources, as the tests run
 * it), and Debian's chromium opening `boxsync ui`'s login link. Prints the browser's first contentful paint and
 * the time until the folder pair is on screen (both from the navigation's start, from the page's own
 * Performance API). A measurement, not a test: `node --import tsx test/bench/ui-first-paint.ts`.
 */
import { join } from 'node:path';
import { startBoxServer } from '../../src/box-server/index.js';
import { sendControl } from '../../src/daemon/control/control-client.js';
import type { DaemonStatus, UiLoginResult } from '../../src/daemon/control/control-protocol.js';
import { spawnCli } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';
import { waitFor } from '../support/wait.js';
import { launchChromium } from '../daemon/ui/browser.js';
import { buildSyncedFixture } from './journal-fixture.js';

const files = Number(process.env['BENCH_UI_FILES'] ?? 100_000);
const { dir, cleanup } = await makeTempDir('boxsync-ui-paint-');
const srv = await startBoxServer({ port: 0, tokens: ['T'], longPollTimeoutMs: 3000 });
let child: ReturnType<typeof spawnCli> | null = null;
try {
  const t0 = performance.now();
  const fx = await buildSyncedFixture({ srv, token: 'T', dir, files, configExtra: { log: { level: 'warn' } }, progress: (n) => console.log(`fixture: ${n} files`) });
  console.log(`fixture of ${fx.files} files, ${fx.folders} folders built in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const socketPath = join(dir, 'control.sock');
  child = spawnCli(['daemon', '--config', fx.configFile], { env: { BOXSYNC_UI_PORT: '0' } });
  child.stderr!.on('data', (d: Buffer) => process.stderr.write(d));
  const ready = await waitFor(
    async () => {
      const s = await sendControl<DaemonStatus>(socketPath, { verb: 'status' }).catch(() => null);
      return s && s.engine.lastSuccessfulSyncAtMs !== null && s.engine.phase === 'idle' ? s : null;
    },
    { timeoutMs: 900_000, intervalMs: 500, what: 'the daemon to finish its first pass' },
  );
  console.log(`daemon idle: ${ready.engine.roots[0]?.inSync.files} files in sync`);
  const profile = await makeTempDir('boxsync-chromium-');
  const browser = await launchChromium(profile.dir);
  try {
    for (const round of [1, 2, 3]) {
      const page = await browser.newPage();
      const { url } = await sendControl<UiLoginResult>(socketPath, { verb: 'ui-login' });
      await page.goto(url);
      await page.getByRole('heading', { name: fx.mirror }).waitFor({ timeout: 60_000 });
      const t = (await page.evaluate(`(() => {
        const nav = performance.getEntriesByType('navigation')[0];
        const fcp = performance.getEntriesByName('first-contentful-paint')[0];
        return { fcp: fcp ? fcp.startTime : null, pair: performance.now(), redirectEnd: nav ? nav.redirectEnd : null };
      })()`)) as { fcp: number | null; pair: number };
      console.log(`round ${round}: first contentful paint ${t.fcp?.toFixed(0)} ms, folder pair on screen ${t.pair.toFixed(0)} ms after the navigation started`);
      await page.close();
    }
  } finally {
    await browser.close();
    await profile.cleanup();
  }
} finally {
  child?.kill('SIGTERM');
  if (child) await new Promise((r) => child!.once('close', r));
  await srv.close();
  await cleanup();
}
