/**
 * A synced mirror built by journal-fixture.ts (no first mirror run), with the harness's config pointed at it: the
 * harness's control socket, the fixture's mirror, journal and Box folder.
 */
import { join } from 'node:path';
import { buildSyncedFixture, type SyncedFixture } from '../bench/journal-fixture.js';
import { writeBoxConfig } from '../support/box-config.js';
import type { Harness } from './daemon-harness.js';

export async function fixtureForHarness(h: Harness, o: { name: string; files: number; extra?: Readonly<Record<string, unknown>> }): Promise<SyncedFixture> {
  const fx = await buildSyncedFixture({ srv: h.srv, token: 'T', dir: join(h.dir, o.name), files: o.files, perFolder: 10 });
  await writeBoxConfig(h.configFile, {
    srv: h.srv,
    token: 'T',
    remoteId: fx.boxFolderId,
    localPath: fx.mirror,
    stateDir: fx.stateDir,
    socketPath: h.socketPath,
    extra: { rateLimit: undefined, log: { level: 'info' }, ...o.extra },
  });
  return fx;
}
