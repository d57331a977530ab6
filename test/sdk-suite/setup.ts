/**
 * Runs before each of box-node-sdk's test files (vitest setupFiles): starts a fresh box-server for the file,
 * with an enterprise admin (the default client's user, like the SDK's own test service account) and a
 * second user (USER_ID), installs the network guard, and turns the tests listed in scope.ts's SKIPPED_TESTS
 * into skips that carry their reason in their name. The SDK's `commons.ts` is rewritten by the plugin in
 * plugin.ts so that getDefaultClient() builds a developer-token client on this server.
 */
import { readFileSync } from 'node:fs';
import { afterAll } from 'vitest';
import { startBoxServer, type BoxServer } from '../../src/box-server/index.js';
import { setSuiteServer } from './env.js';
import { installNetGuard } from './net-guard.js';
import { SKIPPED_TESTS } from './scope.js';

// Seeded sample content gives the account a history, as any real Box account has (the events tests read
// the stream from the start and expect something in it).
// HTTPS, as Box: the SDK's tests check that the URLs Box hands out are https://.
const tlsFile = (name: string): string => readFileSync(new URL(`../support/tls/${name}`, import.meta.url), 'utf8');
const cert = tlsFile('localhost-test-only.crt');
const srv: BoxServer = await startBoxServer({
  port: 0,
  sample: true,
  longPollTimeoutMs: 5000,
  tls: { key: tlsFile('localhost-test-only.key'), cert },
});
const port = Number(new URL(srv.baseUrl).port);
const guard = installNetGuard(() => port);

const admin = srv.control.addUser({ name: 'SDK suite admin', login: 'sdk-admin@example.com', enterpriseAdmin: true });
const other = srv.control.addUser({ name: 'SDK suite user', login: 'sdk-user@example.com' });
setSuiteServer({
  baseUrl: srv.baseUrl,
  baseUrls: { baseUrl: srv.baseUrl, uploadUrl: `${srv.baseUrl}/api`, oauth2Url: `${srv.baseUrl}/api/oauth2` },
  agentOptions: { ca: cert },
  admin,
  other,
});
// The SDK's agent (proxy-agent) honours proxy variables; box-server is reached directly.
for (const v of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'all_proxy']) delete process.env[v];
// The SDK's tests read these through getEnvVar(); only USER_ID means anything against box-server.
process.env.USER_ID = other.userId;

type TestFn = (name: string, ...rest: unknown[]) => unknown;
const g = globalThis as unknown as { test: TestFn & { skip: TestFn }; it: TestFn & { skip: TestFn } };
const WRAPPED = Symbol.for('boxsync.sdkSuite.wrappedTest');
// With isolate: false the globals survive from the previous file: wrap the real `test` only once.
const realTest = ((g.test as unknown as Record<symbol, unknown>)[WRAPPED] as typeof g.test | undefined) ?? g.test;
const wrapped = new Proxy(realTest, {
  get(target, prop, receiver) {
    if (prop === WRAPPED) return target;
    return Reflect.get(target, prop, receiver) as unknown;
  },
  apply(target, thisArg, args: [string, ...unknown[]]) {
    const reason = SKIPPED_TESTS[args[0]];
    if (reason !== undefined) return target.skip(`${args[0]} (skipped: ${reason})`, ...args.slice(1));
    return Reflect.apply(target, thisArg, args);
  },
});
g.test = wrapped;
g.it = wrapped;

afterAll(async () => {
  // Every in-scope file has at least one test that calls the API: a file that never reached box-server ran
  // against something else (or nothing), which is a failure, not a pass.
  const served = srv.control.requests().length;
  setSuiteServer(undefined);
  guard.uninstall();
  await srv.close();
  if (guard.refused.length > 0) {
    throw new Error(`sdk-suite network guard refused connections to: ${[...new Set(guard.refused)].join(', ')}`);
  }
  if (served === 0) throw new Error('sdk-suite: box-server answered no request for this file');
});
