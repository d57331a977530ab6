// Runs the CommonJS bundle of `boxsync sync` (dist/cli-script/main.cjs, scripts/bundle-cli.mjs) as one V8 script
// with a code cache: the bytecode V8 compiled in an earlier run, so that a run does not spend its start compiling
// the CLI on the main thread (README, Performance, has the figures). Node 20 has no compile cache of its own (Node
// 22's module.enableCompileCache), so this does what Node's CommonJS loader and v8-compile-cache do: the bundle (a
// module wrapper function, as the build writes it) is compiled with `new vm.Script(source, { cachedData })` and
// called, and after the run `script.createCachedData()` (which then holds the functions the run compiled too) is
// written for the next one. A run that used the cache writes it again when it
// exits 0 and the run that made the cache did not: a cache made by a run that stopped early (a config error, the
// state dir locked), which compiled little of the engine, gives way to one of a whole sync; the runs after that
// write nothing.
//
// Safety (README, Performance; docs/internals.md):
// - The cache file is named by the SHA-256 of the bundle's bytes, Node's version and the CPU architecture: a cache
//   made for other code is never looked up. V8 checks its own version and flags too and rejects what does not fit
//   (`cachedDataRejected`); the file carries the SHA-256 of its payload, checked before V8 sees it, so a file cut
//   short or damaged is never handed to V8. A cache that is missing, unreadable, damaged or rejected means only
//   that the bundle is compiled as without a cache, and a fresh cache is written after the run.
// - It holds compiled code only (V8's bytecode of the bundle's functions), never data of the run: no token, no path.
// - $XDG_CACHE_HOME/boxsync/code-cache (else ~/.cache/boxsync/code-cache), created 0700, files 0600, written to a
//   temp name and renamed. Used only when the folder is this user's and writable by no one else, and a file of at
//   most MAX_BYTES. Any error
//   there (read-only home, no home) leaves the run as it is: nothing is written, nothing fails.
// - BOXSYNC_CODE_CACHE=off: compiled as without a cache, nothing read or written. BOXSYNC_CODE_CACHE_REPORT=1: one
//   line on stderr says what happened (tests: test/cli/code-cache.test.ts), and another (`boxsync: exit: ...`) when
//   the run ends without Node's teardown (exitWithoutTeardown).
import { isAscii } from 'node:buffer';
import { createHash, randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import vm from 'node:vm';

const MAGIC = Buffer.from('boxsync-v8-cache-1\n');
const SHA = 32;
// After the checksum: one byte, 1 when the run that made the cache exited 0; then V8's data.
const WHOLE = 1;
const NAME = /^sync-[0-9a-f]{32}\.v8(?:\.[0-9a-f]+\.tmp)?$/;
/** A cache file bigger than this is not read (the CLI's is 1-2 MB). */
const MAX_BYTES = 64 * 1024 * 1024;

/** Where the code cache lives for this environment ($XDG_CACHE_HOME when absolute, as the XDG spec asks). */
export function codeCacheDir(env) {
  const xdg = env.XDG_CACHE_HOME;
  return join(xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.cache'), 'boxsync', 'code-cache');
}

/** Whether `path` exists as this user's own folder (or file) that no one else may write to; false if it does not exist. */
function ownedByUs(path, wantDir) {
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (st === undefined) return false;
  const mine = typeof process.getuid !== 'function' || st.uid === process.getuid();
  return mine && (wantDir ? st.isDirectory() : st.isFile()) && (st.mode & 0o022) === 0;
}

/** A cache file's V8 data and whether a run that exited 0 made it, or null (and why) when it is not whole and undamaged. */
function readCache(file) {
  if (!ownedByUs(file, false)) return { data: null, why: 'none' };
  if (lstatSync(file).size > MAX_BYTES) return { data: null, why: 'too big' };
  const bytes = readFileSync(file);
  const head = MAGIC.length + SHA;
  if (bytes.length <= head + WHOLE || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) return { data: null, why: 'not a cache file' };
  const body = bytes.subarray(head);
  if (!createHash('sha256').update(body).digest().equals(bytes.subarray(MAGIC.length, head))) return { data: null, why: 'damaged (checksum)' };
  return { data: body.subarray(WHOLE), whole: body[0] === 1, why: '' };
}

function writeCache(dir, file, data, whole) {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (!ownedByUs(dir, true)) throw new Error(`${dir} is not this user's own folder, or others may write to it`);
  const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const body = Buffer.concat([Buffer.of(whole ? 1 : 0), data]);
    writeFileSync(tmp, Buffer.concat([MAGIC, createHash('sha256').update(body).digest(), body]), { mode: 0o600, flag: 'wx' });
    renameSync(tmp, file);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
  // The caches of other builds (an upgrade) and temp files a killed run left: only this build's stays.
  for (const name of readdirSync(dir)) {
    if (NAME.test(name) && join(dir, name) !== file) rmSync(join(dir, name), { force: true });
  }
}

/** The script `file` (its `bytes`) compiled, with V8's `cachedData` when given. */
function wrapperScript(file, bytes, cachedData) {
  // The build writes it in ASCII (scripts/bundle-plugins.mjs asciiOnly): a one-byte string, half the memory of UTF-16.
  // Line 1 is the wrapper's (the banner): line numbers in stack traces are esbuild's.
  return new vm.Script(bytes.toString(isAscii(bytes) ? 'latin1' : 'utf8'), { filename: file, lineOffset: -1, ...(cachedData ? { cachedData } : {}) });
}

/** Calls the compiled script of `file` as Node's CommonJS loader calls a module's wrapper; its exports. */
function runWrapper(script, file) {
  const module = { exports: {} };
  script.runInThisContext().call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
  return module.exports;
}

/**
 * The bundle `file` compiled, with the cache when there is a good one; nothing of the file or the cache is held
 * once compiled (V8 keeps the source it needs).
 */
function compile(file, env, report) {
  const bytes = readFileSync(file);
  const key = createHash('sha256').update(bytes).update(`\0${process.version}\0${process.arch}`).digest('hex').slice(0, 32);
  let dir = null;
  let cacheFile = null;
  let cached = { data: null, why: 'off' };
  if (env.BOXSYNC_CODE_CACHE !== 'off') {
    try {
      dir = codeCacheDir(env);
      cacheFile = join(dir, `sync-${key}.v8`);
      cached = ownedByUs(dir, true) ? readCache(cacheFile) : { data: null, why: 'none' };
    } catch (e) {
      cached = { data: null, why: `unreadable (${e.code ?? e.message})` };
    }
  }
  const script = wrapperScript(file, bytes, cached.data);
  const used = cached.data !== null && !script.cachedDataRejected;
  report(used ? `used ${cacheFile}` : cached.data !== null ? 'rejected by V8; compiled' : `${cached.why}; compiled`);
  return { script, used, madeWhole: cached.whole === true, dir, cacheFile };
}

/**
 * Once the run is over and the event loop has nothing left to do ('beforeExit': every write, socket, timer and
 * thread of the run is done, the journal closed, the cache written), a run that exits 0 ends there with
 * process.exit(): the 'exit' handlers run as always (pino's last flush among them), and the process is left without
 * Node's teardown of the environment and V8's heap, which a `sync --once` paid at every run (tens of milliseconds
 * of wall time on 2 busy cores; README, Performance). Nothing of the run is left to it: a journal that is still open
 * at that point (none is, in a run that exits 0) keeps its committed state in its WAL as after a crash. A run that
 * exits with another code ends as before.
 */
function exitWithoutTeardown(env) {
  process.once('beforeExit', () => {
    if ((process.exitCode ?? 0) !== 0) return;
    if (env.BOXSYNC_CODE_CACHE_REPORT === '1') process.stderr.write('boxsync: exit: without teardown\n');
    process.exit();
  });
}

/**
 * Runs the small script `file` (dist/cli-script/hand-off.cjs: src/cli/hand-off-first.ts) that a `sync --once` runs
 * first: true when it handed the run to a running daemon (the run's exit code set, the process ends as a run of the
 * bundle does), false when there is none and the bundle must run. Compiled without a code cache: V8 compiles the
 * little of it that runs in a few milliseconds.
 */
export async function runHandOffScript(file, env = process.env) {
  const code = await runWrapper(wrapperScript(file, readFileSync(file), null), file).done;
  if (code === null) return false;
  process.exitCode = code;
  exitWithoutTeardown(env);
  return true;
}

/**
 * Runs the bundle `file` (a function expression, called as a CommonJS module's wrapper; its exports' `done` is the
 * run) and resolves when the run is over, after writing the code cache when there was none to use.
 */
export async function runCachedScript(file, env = process.env) {
  // BOXSYNC_PHASES=1's marks (bin/boxsync.js), as src/cli/phases.ts makes them.
  const marks = globalThis[Symbol.for('boxsync.phases')];
  const phase = (name) => marks?.push([name, process.uptime() * 1000]);
  phase('loader');
  const report = env.BOXSYNC_CODE_CACHE_REPORT === '1' ? (line) => process.stderr.write(`boxsync: code cache: ${line}\n`) : () => undefined;
  const { script, used, madeWhole, dir, cacheFile } = compile(file, env, report);
  phase('compiled');
  const exports = runWrapper(script, file);
  await exports.done;
  phase('run over');
  exitWithoutTeardown(env);
  if (cacheFile === null) return;
  const whole = (process.exitCode ?? 0) === 0;
  if (used && (madeWhole || !whole)) return;
  try {
    // V8 stamps the cache with its flags, which the run changed (src/cli/start-flags.ts).
    exports.restoreStartFlags?.();
    writeCache(dir, cacheFile, script.createCachedData(), whole);
    report(`written ${cacheFile}`);
  } catch (e) {
    report(`not written: ${e.code ?? e.message}`);
  }
}
