/**
 * The CLI bundle's stand-in for http2-wrapper (scripts/bundle-plugins.mjs, scripts/http2-wrapper-lazy.cjs): got
 * loads that module, and node:http2 with it, when it loads, though boxsync never sets got's `http2` option. Bundled
 * with the stand-in, neither is loaded until got reads `auto` or `globalAgent`, and then the real ones are there.
 * Real esbuild, the real got and http2-wrapper, a real child process.
 */
import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { repoRoot } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';
// @ts-expect-error: a plain JavaScript build script without types
import { lazyHttp2Wrapper } from '../../scripts/bundle-plugins.mjs';

let tmp: { dir: string; cleanup: () => Promise<void> };
beforeEach(async () => (tmp = await makeTempDir('boxsync-bundle-lazy-')));
afterEach(async () => tmp.cleanup());

const ENTRY = `
import got from 'got';
import http2wrapper from 'http2-wrapper';
const loaded = () => process.moduleLoadList.includes('NativeModule http2');
const atStart = loaded();
const client = got.extend({ retry: { limit: 0 } });
const afterGot = loaded();
const auto = http2wrapper.auto;
const agent = http2wrapper.globalAgent;
process.stdout.write(JSON.stringify({ atStart, afterGot, afterUse: loaded(), auto: typeof auto, agent: typeof agent?.getSession, got: typeof client }));
`;

describe('the CLI bundle', () => {
  it('loads http2-wrapper and node:http2 only when got asks for them, and then the real ones', async () => {
    const entry = join(repoRoot, 'test', 'cli', `.bundle-lazy-entry-${process.pid}.mjs`);
    await writeFile(entry, ENTRY);
    try {
      await build({ entryPoints: [entry], outfile: join(tmp.dir, 'out.mjs'), bundle: true, platform: 'node', format: 'esm', target: 'node20', plugins: [lazyHttp2Wrapper], logLevel: 'silent', banner: { js: "import { createRequire as __r } from 'node:module'; const require = __r(import.meta.url);" } });
    } finally {
      await import('node:fs/promises').then((fs) => fs.rm(entry, { force: true }));
    }
    const r = spawnSync(process.execPath, [join(tmp.dir, 'out.mjs')], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ atStart: false, afterGot: false, afterUse: true, auto: 'function', agent: 'function', got: 'function' });
  });
});
