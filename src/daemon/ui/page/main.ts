/**
 * The daemon's web page (issue 31): Preact with htm, bundled by esbuild (page-assets.ts). It reads the overview
 * and Recent changes once, then lives on the daemon's Server-Sent Events (`status`, `operation`): nothing polls.
 * Every action is a POST to the page's own origin (the server checks Origin and the session cookie). Names are
 * rendered as text (never as HTML) and escaped for control and bidi characters (core/escape.ts), as the shell
 * prints them.
 */
import { html } from 'htm/preact';
import { render, type ComponentChildren } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { escapeText } from '../../../core/escape.js';
import { formatBytesOneDecimal, formatWholeDuration } from '../../../core/format.js';
import type { DaemonStatus, LiveControlsStatus } from '../../control/control-protocol.js';
import type { ConflictView, HistoryEntry } from '../../control/item-protocol.js';
import type { Overall, OverallState } from '../overview.js';
import type { OperationEvent } from '../ui-server.js';
import { getJson, post } from './api.js';
import { SelectiveView } from './selective.js';
import './style.css';

interface Overview {
  readonly status: DaemonStatus;
  readonly overall: Overall;
}

/** A row of Recent changes: an operation (path relative to its folder pair) and its list key. */
type Change = OperationEvent & { readonly key: string };

const STATE_LABEL: Readonly<Record<OverallState, string>> = {
  'up-to-date': 'Up to date',
  syncing: 'Syncing',
  paused: 'Paused',
  'needs-attention': 'Needs attention',
  offline: 'Offline',
};

const VIEWS = ['overview', 'problems', 'changes', 'conflicts', 'selective'] as const;
type View = (typeof VIEWS)[number];
const VIEW_LABEL: Readonly<Record<View, string>> = { overview: 'Overview', problems: 'Problems', changes: 'Recent changes', conflicts: 'Conflicts', selective: 'Selective sync' };
const PAGE_SIZE = 100;
const MAX_CHANGES = 5000;


const when = (ms: number | null): string => (ms === null ? 'never' : new Date(ms).toLocaleString());
const ago = (ms: number | null): string => (ms === null ? 'not yet' : `${formatWholeDuration(Math.max(0, Date.now() - ms))} ago`);
const shown = (s: string): string => escapeText(s);
const count = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

function App(): ComponentChildren {
  const [overview, setOverview] = useState<Overview | null>(null);
  const [connected, setConnected] = useState(false);
  const [view, setView] = useState<View>(() => (VIEWS as readonly string[]).includes(location.hash.slice(1)) ? (location.hash.slice(1) as View) : 'overview');
  const [changes, setChanges] = useState<Change[]>([]);
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);

  useEffect(() => {
    const source = new EventSource('/api/events');
    source.addEventListener('open', () => setConnected(true));
    source.addEventListener('error', () => setConnected(false));
    source.addEventListener('status', (e) => setOverview(JSON.parse((e as MessageEvent<string>).data) as Overview));
    source.addEventListener('operation', (e) => {
      const op = JSON.parse((e as MessageEvent<string>).data) as OperationEvent;
      setChanges((old) => [toChange(op, `live-${old.length}-${op.atMs}`), ...old].slice(0, MAX_CHANGES));
    });
    void getJson<{ entries: HistoryEntry[] }>('/api/history?limit=1000').then(
      // An operation that arrived live while the history was read is in both: keep the live row.
      (r) => setChanges((live) => [...live, ...r.entries.filter((e) => !live.some((c) => sameOperation(c, e))).map((e) => toChange(e, `seq-${e.seq}`))]),
      (e: unknown) => setMessage({ text: `Recent changes could not be read: ${String(e)}`, error: true }),
    );
    return () => source.close();
  }, []);

  const state: OverallState | 'loading' = overview === null ? 'loading' : connected ? overview.overall.state : 'offline';
  useEffect(() => {
    document.title = `boxsync: ${state === 'loading' ? 'loading' : STATE_LABEL[state]}`;
    const icon = document.querySelector<HTMLLinkElement>('link[rel=icon]');
    if (icon) icon.href = `/favicon/${state}.svg`;
    document.body.dataset['state'] = state;
  }, [state]);

  const act = (what: Promise<string>): void => {
    void what.then(
      (text) => setMessage({ text, error: false }),
      (e: unknown) => setMessage({ text: e instanceof Error ? e.message : String(e), error: true }),
    );
  };
  const go = (v: View): void => {
    setView(v);
    history.replaceState(null, '', `#${v}`);
  };

  const problems = overview?.status.engine.errors.length ?? 0;
  const counts: Partial<Record<View, number>> = { problems };
  return html`
    <header>
      <h1>boxsync</h1>
      <p class="state" role="status" aria-live="polite" data-state=${state}>
        <span class="dot" aria-hidden="true"></span>
        <strong>${state === 'loading' ? 'Loading…' : STATE_LABEL[state]}</strong>
        ${!connected && overview !== null ? html`<span class="reason">the page lost its connection to the daemon; reconnecting</span>` : null}
        ${connected && overview && overview.overall.reasons.length > 0 ? html`<span class="reason">${overview.overall.reasons.map(shown).join('; ')}</span>` : null}
      </p>
      <${Controls} overview=${overview} act=${act} />
    </header>
    <nav role="tablist" aria-label="Views">
      ${VIEWS.map(
        (v) => html`<button role="tab" id=${`tab-${v}`} aria-selected=${view === v} aria-controls="view" onClick=${() => go(v)}>
          ${VIEW_LABEL[v]}${counts[v] ? html` <span class="count">${counts[v]}</span>` : null}
        </button>`,
      )}
    </nav>
    ${message ? html`<p class=${message.error ? 'message error' : 'message'} role="alert">${message.text} <button class="link" onClick=${() => setMessage(null)}>Dismiss</button></p>` : null}
    <main id="view" role="tabpanel" aria-labelledby=${`tab-${view}`}>
      ${overview === null
        ? html`<p>Waiting for the daemon…</p>`
        : view === 'overview'
          ? html`<${OverviewView} o=${overview} act=${act} />`
          : view === 'problems'
            ? html`<${ProblemsView} o=${overview} act=${act} />`
            : view === 'changes'
              ? html`<${ChangesView} o=${overview} changes=${changes} />`
              : view === 'selective'
                ? html`<${SelectiveView} pairs=${overview.status.engine.roots.map((r) => r.localPath)} act=${act} />`
                : html`<${ConflictsView} o=${overview} act=${act} />`}
    </main>
  `;
}

/** The same operation seen live and in the journal's history (their times are taken a moment apart). */
function sameOperation(c: Change, e: OperationEvent): boolean {
  return c.root === e.root && c.path === e.path && c.kind === e.kind && Math.abs(c.atMs - e.atMs) < 2_000;
}

function toChange(e: OperationEvent, key: string): Change {
  return { key, root: e.root, path: e.path, kind: e.kind, reason: e.reason, ok: e.ok, error: e.error, atMs: e.atMs };
}

function Controls({ overview, act }: { overview: Overview | null; act: (p: Promise<string>) => void }): ComponentChildren {
  const held = overview?.status.controls?.pausedPairs.length ?? 0;
  // Paused as a whole, or every pair on its own: Resume releases them all.
  const paused = overview?.status.engine.phase === 'paused' || (held > 0 && held === overview?.status.engine.roots.length);
  return html`<div class="controls" role="group" aria-label="Controls">
    ${paused
      ? html`<button onClick=${() => act(post('/api/resume'))}>Resume</button>`
      : html`<button onClick=${() => act(post('/api/pause'))} disabled=${overview === null}>Pause</button>`}
    <button onClick=${() => act(post('/api/sync-now'))} disabled=${overview === null}>Sync now</button>
    ${overview?.status.controls ? html`<${LiveControls} c=${overview.status.controls} act=${act} />` : null}
  </div>`;
}

/** The bandwidth limit and notifications of the running daemon (lifecycle/live-controls.ts): not saved to the config. */
function LiveControls({ c, act }: { c: LiveControlsStatus; act: (p: Promise<string>) => void }): ComponentChildren {
  const current = c.bandwidthBytesPerSec === null ? 'off' : `${formatBytesOneDecimal(c.bandwidthBytesPerSec)}/s`;
  const [rate, setRate] = useState('');
  const submit = (e: Event): void => {
    e.preventDefault();
    if (rate.trim() !== '') act(post('/api/bwlimit', { rate: rate.trim() }).then((m) => (setRate(''), m)));
  };
  return html`<form class="bwlimit" onSubmit=${submit}>
      <label for="bwlimit-rate">Bandwidth limit (now ${current})</label>
      <input id="bwlimit-rate" size="8" placeholder="500K, 2M, off" value=${rate} onInput=${(e: Event) => setRate((e.target as HTMLInputElement).value)} />
      <button type="submit">Set limit</button>
    </form>
    <label class="notifications" title=${c.notifications.available ? '' : 'no desktop session or notify-send: none can be shown'}>
      <input type="checkbox" checked=${c.notifications.on} onChange=${(e: Event) => act(post('/api/notifications', { on: (e.target as HTMLInputElement).checked }))} />
      Desktop notifications
    </label>`;
}

function OverviewView({ o, act }: { o: Overview; act: (p: Promise<string>) => void }): ComponentChildren {
  const s = o.status;
  const e = s.engine;
  const rs = s.remoteStream;
  return html`
    ${e.heldGuard
      ? html`<section class="guard" aria-labelledby="guard-title">
          <h2 id="guard-title">A safety guard holds syncing</h2>
          <p>${shown(e.heldGuard.message)}</p>
          ${e.heldGuard.firstPaths && e.heldGuard.firstPaths.length > 0
            ? html`<p>It would delete ${e.heldGuard.deletes ?? e.heldGuard.firstPaths.length} item(s)${(e.heldGuard.deletes ?? 0) > e.heldGuard.firstPaths.length ? html`; the first ${e.heldGuard.firstPaths.length}` : null}:</p>
                <ul class="guard-paths" aria-label="What it would delete">
                  ${e.heldGuard.firstPaths.map((p) => html`<li><code>${shown(p)}</code></li>`)}
                </ul>`
            : null}
          <p class="id">Guard: <code>${shown(e.heldGuard.id)}</code></p>
          <button class="danger" onClick=${() => act(post('/api/confirm', { id: e.heldGuard!.id }))}>Confirm</button>
          <button onClick=${() => act(post('/api/pause').then(() => 'Kept everything: syncing is paused and nothing was deleted. Resume to be asked again.'))}>Keep everything and stop</button>
        </section>`
      : null}
    ${e.roots.map((r) => {
      const transfers = r.inFlight;
      const pairPaused = s.controls?.pausedPairs.includes(r.localPath) === true;
      return html`<section class="pair" aria-label=${`Folder pair ${shown(r.localPath)}`}>
        <h2>${shown(r.localPath)}${pairPaused ? html` <span class="badge">paused</span>` : null}</h2>
        <p class="sub">Box folder ${shown(r.remoteId)}</p>
        ${pairPaused
          ? html`<button aria-label=${`Resume ${shown(r.localPath)}`} onClick=${() => act(post('/api/resume', { path: r.localPath }))}>Resume this pair</button>`
          : html`<button aria-label=${`Pause ${shown(r.localPath)}`} onClick=${() => act(post('/api/pause', { path: r.localPath }))}>Pause this pair</button>`}
        <dl>
          <dt>In sync</dt><dd>${count(r.inSync.files, 'file')}, ${count(r.inSync.folders, 'folder')}, ${formatBytesOneDecimal(r.inSync.bytes)}</dd>
          <dt>Queued</dt><dd>${count(r.queued.ops, 'operation')}, ${formatBytesOneDecimal(r.queued.bytes)}</dd>
          <dt>Last successful sync</dt><dd>${ago(e.lastSuccessfulSyncAtMs)}</dd>
          ${transfers.length > 0
            ? html`<dt>Speed</dt><dd>${formatBytesOneDecimal(r.rateBytesPerSec)}/s${r.etaSec === null ? '' : `, about ${formatWholeDuration(r.etaSec * 1000)} left`}</dd>`
            : null}
        </dl>
        ${transfers.length > 0
          ? html`<ul class="transfers" aria-label="Transfers in flight">
              ${transfers.map(
                (t) => html`<li>
                  <span>${t.direction === 'up' ? 'Uploading' : 'Downloading'} ${shown(t.path)}</span>
                  <progress max=${Math.max(1, t.totalBytes)} value=${t.doneBytes} aria-label=${`${shown(t.path)}: ${formatBytesOneDecimal(t.doneBytes)} of ${formatBytesOneDecimal(t.totalBytes)}`}></progress>
                </li>`,
              )}
            </ul>`
          : null}
      </section>`;
    })}
    <section aria-labelledby="conn-title">
      <h2 id="conn-title">Connections</h2>
      <dl>
        <dt>Box</dt>
        <dd>${rs.state === 'listening' ? `listening on the ${rs.effective} event stream` : `${rs.state}${rs.note ? `: ${shown(rs.note)}` : ''}`}${rs.lastEventAtMs ? ` (last event ${ago(rs.lastEventAtMs)})` : ''}</dd>
        ${s.watchers.map(
          (w) => html`<dt>Watcher</dt><dd>${shown(w.localPath)}: ${w.kind}, ${w.health.state}${'reason' in w.health && w.health.reason ? `: ${shown(String(w.health.reason))}` : ''}</dd>`,
        )}
      </dl>
      ${s.notices.length > 0 ? html`<ul class="notices">${s.notices.map((n) => html`<li>${shown(n)}</li>`)}</ul>` : null}
    </section>
  `;
}

function rootPath(o: Overview, root: string): string {
  return o.status.engine.roots.find((r) => r.root === root)?.localPath ?? '';
}

/** An item's local path: its folder pair's, and the path below it ('' is the pair's folder itself). */
function absolute(o: Overview, root: string, path: string): string {
  return path === '' ? rootPath(o, root) : `${rootPath(o, root)}/${path}`;
}

function ProblemsView({ o, act }: { o: Overview; act: (p: Promise<string>) => void }): ComponentChildren {
  const errors = o.status.engine.errors;
  const [page, setPage] = useState(0);
  if (errors.length === 0) return html`<p class="empty">No problems: every item syncs.</p>`;
  const rows = errors.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE);
  return html`
    <p><button onClick=${() => act(post('/api/retry'))}>Retry all</button> ${count(errors.length, 'item')} not syncing.</p>
    <table>
      <caption class="sr-only">Items that are failing or parked</caption>
      <thead><tr><th scope="col">Item</th><th scope="col">Reason</th><th scope="col">Since</th><th scope="col">What happens next</th><th scope="col">Actions</th></tr></thead>
      <tbody>
        ${rows.map((p) => {
          const abs = absolute(o, p.root, p.path);
          return html`<tr class="problem">
            <td class="path">${shown(abs)}</td>
            <td>${shown(p.message)}</td>
            <td class="since">${p.sinceMs === null ? 'before this version kept it' : html`<time datetime=${new Date(p.sinceMs).toISOString()}>${when(p.sinceMs)}</time> (${ago(p.sinceMs)})`}</td>
            <td>${p.nextRetryAtMs === null ? 'Parked: tried again when the item changes, or when you press Retry' : `Tried again automatically at ${when(p.nextRetryAtMs)}`}</td>
            <td class="actions">
              <button aria-label=${`Retry ${shown(abs)}`} onClick=${() => act(post('/api/retry', { path: abs }))}>Retry</button>
              <button aria-label=${`Open the folder of ${shown(abs)}`} onClick=${() => act(post('/api/open-folder', { path: abs }))}>Open folder</button>
            </td>
          </tr>`;
        })}
      </tbody>
    </table>
    <${Pager} page=${page} total=${errors.length} setPage=${setPage} />
  `;
}

function Pager({ page, total, setPage }: { page: number; total: number; setPage: (n: number) => void }): ComponentChildren {
  const pages = Math.ceil(total / PAGE_SIZE);
  if (pages <= 1) return null;
  return html`<p class="pager">
    <button disabled=${page === 0} onClick=${() => setPage(page - 1)}>Previous</button>
    <span>Page ${page + 1} of ${pages}</span>
    <button disabled=${page >= pages - 1} onClick=${() => setPage(page + 1)}>Next</button>
  </p>`;
}

function ChangesView({ o, changes }: { o: Overview; changes: readonly Change[] }): ComponentChildren {
  const [root, setRoot] = useState('');
  const [kind, setKind] = useState('');
  const [page, setPage] = useState(0);
  const kinds = useMemo(() => [...new Set(changes.map((c) => c.kind))].sort(), [changes]);
  const rows = changes.filter((c) => (root === '' || c.root === root) && (kind === '' || c.kind === kind));
  return html`
    <div class="filters">
      <label>Folder pair
        <select value=${root} onChange=${(e: Event) => { setRoot((e.target as HTMLSelectElement).value); setPage(0); }}>
          <option value="">All</option>
          ${o.status.engine.roots.map((r) => html`<option value=${r.root}>${shown(r.localPath)}</option>`)}
        </select>
      </label>
      <label>Kind
        <select value=${kind} onChange=${(e: Event) => { setKind((e.target as HTMLSelectElement).value); setPage(0); }}>
          <option value="">All</option>
          ${kinds.map((k) => html`<option value=${k}>${k}</option>`)}
        </select>
      </label>
    </div>
    ${rows.length === 0
      ? html`<p class="empty">No changes yet.</p>`
      : html`<table>
          <caption class="sr-only">Recent changes, newest first</caption>
          <thead><tr><th scope="col">When</th><th scope="col">What</th><th scope="col">Item</th><th scope="col">Why</th></tr></thead>
          <tbody>
            ${rows.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE).map(
              (c) => html`<tr class=${c.ok ? 'change' : 'change failed'} key=${c.key}>
                <td>${when(c.atMs)}</td>
                <td>${c.kind}${c.ok ? '' : ' (failed)'}</td>
                <td class="path">${shown(absolute(o, c.root, c.path))}</td>
                <td>${shown(c.reason)}${c.error ? html`<br /><span class="error">${shown(c.error)}</span>` : null}</td>
              </tr>`,
            )}
          </tbody>
        </table>
        <${Pager} page=${page} total=${rows.length} setPage=${setPage} />`}
  `;
}

function ConflictsView({ o, act }: { o: Overview; act: (p: Promise<string>) => void }): ComponentChildren {
  const [list, setList] = useState<readonly ConflictView[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  // Read again whenever the daemon's count of conflicts changes (a pass made or settled one).
  const count = o.status.engine.conflicts.length;
  const [asked, setAsked] = useState(0);
  useEffect(() => {
    getJson<{ conflicts: ConflictView[] }>('/api/conflicts').then(
      (r) => setList(r.conflicts),
      (e: unknown) => setError(String(e)),
    );
  }, [count, asked]);
  if (error) return html`<p class="message error">Conflicts could not be read: ${error}</p>`;
  if (list === null) return html`<p>Reading conflicts…</p>`;
  if (list.length === 0) return html`<p class="empty">No conflicts.</p>`;
  const resolve = (path: string, keep: 'local' | 'remote' | 'both'): void => act(post('/api/conflicts/resolve', { path, keep }).finally(() => setAsked((n) => n + 1)));
  return html`<table>
    <caption class="sr-only">Conflict copies</caption>
    <thead><tr><th scope="col">File</th><th scope="col">This machine's copy</th><th scope="col">Box's version</th><th scope="col">Keep</th></tr></thead>
    <tbody>
      ${list.map(
        (c) => html`<tr class="conflict">
          <td class="path">${shown(c.originalPath)}</td>
          <td>${shown(c.copyPath)}<br />${formatBytesOneDecimal(c.local.sizeBytes)}, changed ${when(c.local.mtimeMs)}</td>
          <td>${c.remote ? `${formatBytesOneDecimal(c.remote.sizeBytes)}, changed ${when(c.remote.modifiedAtMs)}` : 'nothing on Box now'}</td>
          <td class="actions">
            <button aria-label=${`Keep this machine's version of ${shown(c.originalPath)}`} onClick=${() => resolve(c.originalPath, 'local')}>Keep mine</button>
            <button aria-label=${`Keep Box's version of ${shown(c.originalPath)}`} onClick=${() => resolve(c.originalPath, 'remote')}>Keep Box's</button>
            <button aria-label=${`Keep both versions of ${shown(c.originalPath)}`} onClick=${() => resolve(c.originalPath, 'both')}>Keep both</button>
          </td>
        </tr>`,
      )}
    </tbody>
  </table>`;
}

const mount = document.getElementById('app');
if (mount) {
  mount.textContent = '';
  render(html`<${App} />`, mount);
}
