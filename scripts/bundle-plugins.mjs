// esbuild options and plugins of scripts/bundle-cli.mjs (a module of their own so that a test can bundle with them).
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/**
 * got loads http2-wrapper (and with it node:http2) when it loads, for its `http2` option, which boxsync never
 * sets: this puts a stand-in in its place (http2-wrapper-lazy.cjs) that loads the real module, bundled too, on
 * first use. test/cli/bundle-lazy.test.ts.
 */
export const lazyHttp2Wrapper = {
  name: 'lazy-http2-wrapper',
  setup(build) {
    build.onResolve({ filter: /^http2-wrapper$/ }, () => ({ path: join(here, 'http2-wrapper-lazy.cjs') }));
  },
};

/**
 * got's @sindresorhus/is makes two Intl.ListFormat objects when it loads, for the messages of its failed assertions,
 * which boxsync never shows: the first Intl object of a process starts ICU (about 8 ms of CPU), and a `sync` run
 * makes no other. This makes each on its first use, with the same arguments. The two lines are replaced only as
 * they are written (a version that writes them otherwise is bundled as it is). test/cli/bundle-lazy.test.ts.
 */
export const lazyListFormat = {
  name: 'lazy-list-format',
  setup(build) {
    build.onLoad({ filter: /[\\/]@sindresorhus[\\/]is[\\/]distribution[\\/]index\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      let replaced = 0;
      const contents = text.replace(/^const (andFormatter|orFormatter) = new Intl\.ListFormat\(('en', \{ style: 'long', type: '(?:conjunction|disjunction)' \})\);$/gm, (_, name, options) => {
        replaced++;
        return `let ${name}Made; const ${name} = { format: (list) => (${name}Made ??= new Intl.ListFormat(${options})).format(list) };`;
      });
      return replaced === 2 ? { contents, loader: 'js' } : undefined;
    });
  },
};

/**
 * Four modules inside the bundle require a module at load that `sync` never uses (each cost a run 1-5 ms of CPU):
 * commander's lib/command.js and node-cron node:child_process (for a command run as another executable, which
 * boxsync has none of, and for node-cron's background tasks, which boxsync does not ask for), pino's lib/transport.js thread-stream (loaded from node_modules: pino's transports, which `sync` never
 * starts) and sonic-boom's node:assert (one check of a file descriptor). Each is made a stand-in that requires the
 * module on first use, with the same arguments. A line is replaced only as it is written (a version that writes it
 * otherwise is bundled as it is). test/cli/bundle-lazy.test.ts.
 */
const LAZY_REQUIRES = [
  {
    file: /[\\/]commander[\\/]lib[\\/]command\.js$/,
    line: "const childProcess = require('node:child_process');",
    lazy: "let childProcessMade; const childProcess = { spawn: (...args) => (childProcessMade ??= require('node:child_process')).spawn(...args) };",
  },
  {
    file: /[\\/]node-cron[\\/]dist[\\/]node-cron\.js$/,
    line: "import { fork } from 'child_process';",
    lazy: "let childProcessMade; const fork = (...args) => (childProcessMade ??= require('child_process')).fork(...args);",
  },
  {
    file: /[\\/]pino[\\/]lib[\\/]transport\.js$/,
    line: "const ThreadStream = require('thread-stream')",
    lazy: "let ThreadStreamMade; const ThreadStream = function (...args) { return new (ThreadStreamMade ??= require('thread-stream'))(...args) }",
  },
  {
    file: /[\\/]sonic-boom[\\/]index\.js$/,
    line: "const assert = require('assert')",
    lazy: "let assertMade; const assert = (...args) => (assertMade ??= require('assert'))(...args)",
  },
];

export const lazyRequires = {
  name: 'lazy-requires',
  setup(build) {
    for (const { file, line, lazy } of LAZY_REQUIRES) {
      build.onLoad({ filter: file }, (args) => {
        const lines = readFileSync(args.path, 'utf8').split('\n');
        const at = lines.filter((l) => l === line).length === 1 ? lines.indexOf(line) : -1;
        if (at < 0) return undefined;
        lines[at] = lazy;
        return { contents: lines.join('\n'), loader: 'js' };
      });
    }
  },
};

/**
 * esbuild's options for the one-script CommonJS bundle of the CLI (scripts/bundle-cli.mjs says why each is so):
 * `entry` (dist/cli/script-main.js; a test may give src/cli/script-main.ts) bundled into `outfile`.
 */
export function cliScriptOptions(entry, outfile) {
  return {
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // pino is inside: `sync` logs to a stream of its own (commands/sync.ts cliLogger), never through a transport,
    // whose worker files (thread-stream's) are found beside their own module, so thread-stream stays outside.
    // better-sqlite3's JavaScript is inside (its native addon is found by src/journal/sqlite-addon.ts and loaded
    // from its package, as before); `bindings`, which better-sqlite3 would ask only when that found none, stays out.
    external: ['bindings', 'pino-pretty', 'thread-stream', 'esbuild', 'tsx'],
    define: { 'import.meta.url': '__boxsyncImportMetaUrl' },
    // The script is one function expression, which bin/code-cache.js compiles and calls as Node's CommonJS loader
    // calls a module's wrapper (strict, as the ES modules it is made from); its modules' import.meta.url is its own.
    banner: { js: '(function (exports, require, module, __filename, __dirname) {"use strict"; var __boxsyncImportMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
    footer: { js: '})' },
    supported: { 'dynamic-import': false },
    logLevel: 'warning',
    plugins: [lazyHttp2Wrapper, lazyListFormat, lazyRequires],
  };
}

/**
 * Rewrites the bundle `file` in ASCII, so that bin/code-cache.js reads it into a one-byte string (3.5 MB, where UTF-16
 * takes 7): esbuild escapes what is not ASCII in strings, regular expressions and names, but copies comments as they
 * are. Each character left (in a comment) becomes the same \uXXXX escape esbuild writes elsewhere, which means the
 * same character wherever it stands.
 */
export function asciiOnly(file) {
  writeFileSync(file, readFileSync(file, 'utf8').replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
}
