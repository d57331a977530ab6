/**
 * The CLI bundle's stand-in for http2-wrapper (scripts/bundle-plugins.mjs, scripts/http2-wrapper-lazy.cjs): got
 * loads that module, and node:http2 with it, when it loads, though boxsync never sets got's `http2` option. Bundled
 * with the stand-in, neither is loaded until got reads `auto` or `globalAgent`, and then the real ones are there.
 * And got's @sindresorhus/is, whose two Intl.ListFormat objects (ICU's start, about 8 ms) are made on first use
 * (lazyListFormat), with the same messages as the module's own. And commander's and node-cron's node:child_process,
 * pino's thread-stream and sonic-boom's node:assert, required on first use (lazyRequires).
 * Real esbuild, the real got, http2-wrapper and @sindresorhus/is, real child processes.
 */
import { spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { repoRoot } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';
// @ts-expect-error: a plain JavaScript build script without types
import { lazyHttp2Wrapper, lazyListFormat, lazyRequires } from '../../scripts/bundle-plugins.mjs';

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

  it("requires commander's and node-cron's node:child_process, pino's thread-stream and sonic-boom's node:assert on first use, and then the real ones", async () => {
    const code = `
import { Command } from 'commander';
import cron from 'node-cron';
import pino from 'pino';
import SonicBoom from 'sonic-boom';
const has = (m) => process.moduleLoadList.includes('NativeModule ' + m);
const threadStream = () => Object.keys(require.cache).some((k) => k.includes('thread-stream'));
const atLoad = { childProcess: has('child_process'), assert: has('assert'), threadStream: threadStream() };
const program = new Command().name('x');
const valid = cron.validate('*/5 * * * *');
// sonic-boom's one check, through its stand-in: the real assert's error.
const boom = new SonicBoom({ fd: 1, sync: true });
boom.fd = 'x';
let check;
try { boom.destroy(); } catch (e) { check = [e.name, e.code, e.message]; }
// A pino transport: a real thread-stream, made through its stand-in.
const transport = pino.transport({ target: process.argv[3], options: { destination: process.argv[2] } });
const stream = transport.constructor.name;
transport.end();
process.stdout.write(JSON.stringify({ atLoad, program: program.name(), valid, check, stream, threadStream: threadStream() }));
`;
    const entry = join(repoRoot, 'test', 'cli', `.bundle-requires-entry-${process.pid}.mjs`);
    // Beside the entry, so that thread-stream (outside the bundle) is found in node_modules, as from dist/cli-script.
    const out = join(repoRoot, 'test', 'cli', `.bundle-requires-out-${process.pid}.cjs`);
    await writeFile(entry, code);
    try {
      await build({ entryPoints: [entry], outfile: out, bundle: true, platform: 'node', format: 'cjs', target: 'node20', external: ['thread-stream'], plugins: [lazyRequires], logLevel: 'silent', define: { 'import.meta.url': '__importMetaUrl' }, banner: { js: 'var __importMetaUrl = require("node:url").pathToFileURL(__filename).href;' } });
      const text = await readFile(out, 'utf8');
      // Each of the four lines was replaced (a version that writes one otherwise would be bundled as it is).
      expect(text.match(/Made\d* \?\?= require\("(?:node:child_process|child_process|thread-stream|assert)"\)/g)).toHaveLength(4);
      // A transport target of its own (pino's own pino/file is looked up beside the caller, here the bundle).
      const target = join(tmp.dir, 'target.cjs');
      await writeFile(target, "module.exports = (o) => require('node:fs').createWriteStream(o.destination);\n");
      const r = spawnSync(process.execPath, [out, join(tmp.dir, 'log.json'), target], { encoding: 'utf8', timeout: 60_000 });
      expect(r.status, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({
        atLoad: { childProcess: false, assert: false, threadStream: false },
        program: 'x',
        valid: true,
        check: ['AssertionError', 'ERR_ASSERTION', 'sonic.fd must be a number, got string'],
        stream: 'ThreadStream',
        threadStream: true,
      });
    } finally {
      await import('node:fs/promises').then(async (fs) => Promise.all([fs.rm(entry, { force: true }), fs.rm(out, { force: true })]));
    }
  });

  it("makes @sindresorhus/is's list formatters on first use, and its messages are the module's own", async () => {
    const code = `
import { assert } from '@sindresorhus/is';
const message = (f) => { try { f(); return 'no error'; } catch (e) { return e.message; } };
process.stdout.write(JSON.stringify([message(() => assert.any([(v) => typeof v === 'string', Array.isArray], 1, 2)), message(() => assert.all(Number.isInteger, 1, 'x', true))]));
`;
    const entry = join(repoRoot, 'test', 'cli', `.bundle-list-entry-${process.pid}.mjs`);
    await writeFile(entry, code);
    try {
      await build({ entryPoints: [entry], outfile: join(tmp.dir, 'list.cjs'), bundle: true, platform: 'node', format: 'cjs', target: 'node20', plugins: [lazyListFormat], logLevel: 'silent' });
      const bundled = spawnSync(process.execPath, [join(tmp.dir, 'list.cjs')], { encoding: 'utf8', timeout: 60_000 });
      const direct = spawnSync(process.execPath, [entry], { encoding: 'utf8', timeout: 60_000, cwd: repoRoot });
      expect(bundled.status, bundled.stderr).toBe(0);
      expect(direct.status, direct.stderr).toBe(0);
      const messages = JSON.parse(bundled.stdout) as string[];
      expect(messages).toEqual(JSON.parse(direct.stdout));
      expect(messages[0]).toMatch(/ or /);
      expect(messages[1]).toMatch(/ and /);
    } finally {
      await import('node:fs/promises').then((fs) => fs.rm(entry, { force: true }));
    }
    // Both made on first use: no ListFormat is made as the module loads.
    const text = await readFile(join(tmp.dir, 'list.cjs'), 'utf8');
    expect(text.match(/(?:and|or)FormatterMade \?\?= new Intl\.ListFormat/g)).toHaveLength(2);
    expect(text.match(/new Intl\.ListFormat/g)).toHaveLength(2);
  });
});
