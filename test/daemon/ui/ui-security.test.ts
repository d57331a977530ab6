/**
 * The daemon's web page is reachable by every web page the user visits: each defence with a real daemon child
 * process and real HTTP (issue 31 point 3). One-time login link → HttpOnly SameSite=Strict cookie; no cookie
 * 401; a foreign Host 403 (DNS rebinding); a POST from another origin 403 (CSRF); a strict CSP; nothing outside
 * the configured folder pairs; the token in no log.
 */
import { expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { waitFor } from '../../support/wait.js';
import { closedAfterEach } from '../../support/closed-after-each.js';
import { createHarness } from '../daemon-harness.js';
import { fakeXdgOpen, http, loginLink, uiPort } from './ui-harness.js';

// Each test's harness (box-server, daemon child, temp dirs) is closed after it.
const createClosed = closedAfterEach(createHarness);

it('login link works once, sets a strict cookie; no cookie 401, foreign Host 403, cross-origin POST 403, CSP, no token in logs', async () => {
  const h = await createClosed();
  const run = await h.start();
  const port = await uiPort(h);
  expect(port).toBeGreaterThan(0);
  const page = `http://127.0.0.1:${port}`;

  // No cookie: 401, for the page and the API alike.
  expect((await http(port, '/')).status).toBe(401);
  expect((await http(port, '/api/overview')).status).toBe(401);
  expect((await http(port, '/api/events')).status).toBe(401);

  const link = new URL(await loginLink(h));
  expect(link.origin).toBe(page);
  expect(link.pathname).toBe('/login');
  const token = link.searchParams.get('t')!;
  expect(token.length).toBeGreaterThanOrEqual(40);

  // A foreign Host (a DNS-rebinding page) is refused before the token is even looked at, so the link stays good.
  const rebound = await http(port, `/login${link.search}`, { host: `evil.example:${port}` });
  expect(rebound.status).toBe(403);
  expect(rebound.headers['set-cookie']).toBeUndefined();

  const first = await http(port, `/login${link.search}`);
  expect(first.status).toBe(303);
  expect(first.headers.location).toBe('/');
  const setCookie = String(first.headers['set-cookie']);
  expect(setCookie).toMatch(/^boxsync_ui=[A-Za-z0-9_-]{40,}; HttpOnly; SameSite=Strict; Path=\/$/);
  const cookie = setCookie.split(';')[0]!;
  expect(cookie).not.toContain(token);

  // The link works once.
  const again = await http(port, `/login${link.search}`);
  expect(again.status).toBe(401);
  expect(again.headers['set-cookie']).toBeUndefined();
  expect((await http(port, '/login?t=made-up')).status).toBe(401);

  // With the cookie: the page, with a strict CSP and no inline script; the API shows the pair.
  const index = await http(port, '/', { cookie });
  expect(index.status).toBe(200);
  const csp = String(index.headers['content-security-policy']);
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("script-src 'self'");
  expect(csp).not.toContain('unsafe-inline');
  expect(csp).not.toContain('unsafe-eval');
  expect(index.headers['x-frame-options']).toBe('DENY');
  expect(index.body).not.toMatch(/<script>[^<]/);
  expect(index.body).not.toMatch(/https?:\/\//);
  const overview = await http(port, '/api/overview', { cookie });
  expect(overview.status).toBe(200);
  const o = JSON.parse(overview.body) as { status: { engine: { roots: { localPath: string }[] } }; overall: { state: string } };
  expect(o.status.engine.roots.map((r) => r.localPath)).toEqual([h.mirror]);
  expect(o.overall.state).toBe('up-to-date');
  expect((await http(port, '/app.js', { cookie })).status).toBe(200);

  // The cookie does not open the page under another Host, nor another port's name for it.
  expect((await http(port, '/api/overview', { cookie, host: `evil.example:${port}` })).status).toBe(403);
  expect((await http(port, '/api/overview', { cookie, host: `127.0.0.1:${port + 1}` })).status).toBe(403);
  expect((await http(port, '/api/overview', { cookie, host: `localhost:${port}` })).status).toBe(200);

  // A state-changing request from another origin, or with no Origin at all: 403, and nothing changed.
  expect((await http(port, '/api/pause', { cookie, origin: 'http://evil.example', json: {} })).status).toBe(403);
  expect((await http(port, '/api/pause', { cookie, json: {} })).status).toBe(403);
  expect((await http(port, '/api/pause', { cookie, origin: `http://127.0.0.1:${port + 1}`, json: {} })).status).toBe(403);
  expect((await h.status()).engine.phase).toBe('idle');
  // Without the cookie, even from the page's origin: 401.
  expect((await http(port, '/api/pause', { origin: page, json: {} })).status).toBe(401);

  // From the page: it pauses, through the same verb as `boxsync pause`.
  const paused = await http(port, '/api/pause', { cookie, origin: page, json: {} });
  expect(paused.status, paused.body).toBe(200);
  await waitFor(async () => (await h.status()).engine.phase === 'paused', { what: 'the daemon to pause' });
  expect((await http(port, '/api/resume', { cookie, origin: page, json: {} })).status).toBe(200);
  await waitFor(async () => (await h.status()).engine.phase !== 'paused', { what: 'the daemon to resume' });

  // Nothing outside the configured pairs: a path elsewhere is refused before any verb runs.
  const outside = await http(port, '/api/retry', { cookie, origin: page, json: { path: '/etc/passwd' } });
  expect(outside.status).toBe(403);
  expect(outside.body).toMatch(/not inside any configured folder pair/);
  expect((await http(port, '/api/open-folder', { cookie, origin: page, json: { path: `${h.mirror}/../x` } })).status).toBe(403);
  expect((await http(port, '/api/conflicts/resolve', { cookie, origin: page, json: { path: '/tmp/x', keep: 'both' } })).status).toBe(403);
  expect((await http(port, '/etc/passwd', { cookie })).status).toBe(404);

  // `boxsync ui` without --print-url hands a fresh link to xdg-open (a fake one here), and that link logs in once.
  const xdg = await fakeXdgOpen(h.dir);
  const opened = await runCli(['ui', '--config', h.configFile], { env: xdg.env });
  expect(opened.code, opened.stderr).toBe(0);
  expect(opened.stdout).toMatch(/^opened the boxsync page in your browser/);
  expect(opened.stdout).not.toContain('/login');
  const calls = await waitFor(async () => {
    const c = await xdg.calls();
    return c.length === 1 ? c : null;
  }, { what: 'xdg-open to be called' });
  const viaXdg = new URL(calls[0]![0]!);
  expect(viaXdg.origin).toBe(page);
  expect((await http(port, `/login${viaXdg.search}`)).status).toBe(303);
  expect((await http(port, `/login${viaXdg.search}`)).status).toBe(401);

  // The login token and the session id appear in no log line (a refused link is logged, without its token).
  await h.stop(run);
  const out = run.output();
  expect(out).toMatch(/web page at http:\/\/127\.0\.0\.1:\d+\//);
  expect(out).toMatch(/a login link was refused/);
  expect(out).not.toContain(token);
  expect(out).not.toContain(cookie.split('=')[1]);
});

it('daemon.ui.enabled false: no page, and `boxsync ui` says why', async () => {
  const h = await createClosed({ config: { daemon: { ui: { enabled: false } } } });
  await h.start();
  const r = await runCli(['ui', '--print-url', '--config', h.configFile]);
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/the web page is off \(daemon\.ui\.enabled is false/);
  expect(r.stdout).toBe('');
  await expect(uiPort(h)).rejects.toThrow(/ENOENT/);
});
