/**
 * The page's Selective sync view: the Box folder tree of each folder pair, with a checkbox per folder (checked:
 * synced; unchecked: not synced; mixed: partly) and its size on Box. Nothing is listed until a folder is expanded,
 * and then only that folder, from Box (GET /api/selective/tree, the item command `selective-tree`), a page of
 * PAGE folders at a time ("Show more" asks for the next). A checkbox sends the change to the daemon's `selective`
 * verb (POST /api/selective): local changes in an excluded folder go to Box first, nothing is deleted on Box, and
 * the verb's answer is shown. Every control is a native button or checkbox with a label, so the tree is used from
 * the keyboard (Tab, Space, Enter). Names are rendered as text and escaped (core/escape.ts).
 */
import { html } from 'htm/preact';
import type { ComponentChildren } from 'preact';
import { useRef, useState } from 'preact/hooks';
import { escapeText } from '../../../core/escape.js';
import { formatBytesOneDecimal } from '../../../core/format.js';
import type { SelectiveResult } from '../../control/control-protocol.js';
import type { SelectiveFolderView, SelectiveTreeResult } from '../../control/item-protocol.js';
import { getJson, postJson } from './api.js';

/** Folders asked for per page of one folder's listing. */
const PAGE = 200;

interface Listing {
  readonly folders: readonly SelectiveFolderView[];
  readonly total: number;
  readonly state: SelectiveTreeResult['state'];
}

type Lookup = { readonly loading: true } | { readonly error: string } | Listing;

const treeUrl = (path: string, offset: number, limit: number): string =>
  `/api/selective/tree?${new URLSearchParams({ path, offset: String(offset), limit: String(limit) }).toString()}`;

export function SelectiveView({ pairs, act }: { pairs: readonly string[]; act: (p: Promise<string>) => void }): ComponentChildren {
  const [listings, setListings] = useState<ReadonlyMap<string, Lookup>>(new Map());
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const [busy, setBusy] = useState<string | null>(null);
  const current = useRef(listings);
  current.current = listings;
  const put = (path: string, l: Lookup): void => setListings((m) => new Map(m).set(path, l));

  /** One folder's listing from Box: its first page, or (more) the next one added to what is shown. */
  const load = async (path: string, more = false): Promise<void> => {
    const had = current.current.get(path);
    const shown = more && had !== undefined && 'folders' in had ? had.folders : [];
    if (!more) put(path, { loading: true });
    try {
      const r = await getJson<SelectiveTreeResult>(treeUrl(path, shown.length, PAGE));
      put(path, { folders: [...shown, ...r.folders], total: r.total, state: r.state });
    } catch (e) {
      put(path, { error: e instanceof Error ? e.message : String(e) });
    }
  };

  const toggle = (path: string): void => {
    const next = new Set(open);
    if (next.has(path)) next.delete(path);
    else {
      next.add(path);
      if (!current.current.has(path)) void load(path);
    }
    setOpen(next);
  };

  /** After a change of selection: every listing shown is read again (one folder at a time), for the new states. */
  const reloadShown = async (): Promise<void> => {
    for (const [path, l] of current.current) {
      if (!('folders' in l)) continue;
      try {
        const r = await getJson<SelectiveTreeResult>(treeUrl(path, 0, Math.max(PAGE, l.folders.length)));
        put(path, { folders: r.folders, total: r.total, state: r.state });
      } catch (e) {
        put(path, { error: e instanceof Error ? e.message : String(e) });
      }
    }
  };

  const change = (f: SelectiveFolderView): void => {
    const action = f.state === 'not synced' ? 'include' : 'exclude';
    setBusy(`${action === 'exclude' ? 'Excluding' : 'Including'} ${escapeText(f.path)}: ${action === 'exclude' ? 'local changes in it go to Box first, then its local copy goes to the local trash (Box keeps it)' : 'it is downloaded from Box'}…`);
    act(
      postJson<SelectiveResult>('/api/selective', { action, path: f.path })
        .then((r) => {
          // Held or kept: the folder was not freed (files Box lacks); the answer names them.
          if (r.outcome === 'held' || r.outcome === 'kept') throw new Error(r.message);
          return r.message;
        })
        .finally(() => {
          setBusy(null);
          void reloadShown();
        }),
    );
  };

  const folderRows = (path: string, depth: number): ComponentChildren => {
    const l = listings.get(path);
    if (l === undefined || !open.has(path)) return null;
    if ('loading' in l) return html`<li class="note" style=${`--depth:${depth}`}>Listing from Box…</li>`;
    if ('error' in l) {
      return html`<li class="note error" style=${`--depth:${depth}`}>
        Could not list this folder: ${escapeText(l.error)} <button class="link" onClick=${() => void load(path)}>Try again</button>
      </li>`;
    }
    return html`
      ${l.folders.length === 0 ? html`<li class="note" style=${`--depth:${depth}`}>No subfolders.</li>` : null}
      ${l.folders.map((f) => html`${row(f, depth)}${folderRows(f.path, depth + 1)}`)}
      ${l.folders.length < l.total
        ? html`<li class="note" style=${`--depth:${depth}`}>
            ${l.folders.length} of ${l.total} folders shown.
            <button onClick=${() => void load(path, true)}>Show more</button>
          </li>`
        : null}
    `;
  };

  const row = (f: SelectiveFolderView, depth: number): ComponentChildren => {
    const name = escapeText(f.name);
    const expanded = open.has(f.path);
    return html`<li class="folder" style=${`--depth:${depth}`} data-state=${f.state}>
      <button class="twisty" aria-expanded=${expanded} aria-label=${`${expanded ? 'Collapse' : 'Expand'} ${name}`} onClick=${() => toggle(f.path)}>${expanded ? '▾' : '▸'}</button>
      <label>
        <input
          type="checkbox"
          checked=${f.state === 'synced' || f.state === 'partly'}
          indeterminate=${f.state === 'partly'}
          aria-checked=${f.state === 'partly' ? 'mixed' : String(f.state === 'synced')}
          disabled=${busy !== null || f.state === 'excluded'}
          aria-label=${`Sync ${name}`}
          onChange=${(e: Event) => {
            e.preventDefault();
            change(f);
          }}
        />
        ${name}/
      </label>
      <span class="size">${formatBytesOneDecimal(f.sizeBytes)}</span>
      <span class="state">${f.state === 'excluded' ? 'excluded by the config' : f.state}</span>
    </li>`;
  };

  return html`
    <p>The Box folders kept on this disk. Unchecking a folder uploads local changes in it first, then moves its local
      copy to the local trash; Box keeps it. Checking it again downloads it. Nothing is deleted on Box.</p>
    ${busy !== null ? html`<p class="message" role="status" aria-live="polite">${busy}</p>` : null}
    ${pairs.map((p) => {
      const expanded = open.has(p);
      const l = listings.get(p);
      return html`<section class="selective" aria-label=${`Box folders of ${escapeText(p)}`}>
        <h2>
          <button class="twisty" aria-expanded=${expanded} aria-label=${`${expanded ? 'Collapse' : 'Expand'} ${escapeText(p)}`} onClick=${() => toggle(p)}>${expanded ? '▾' : '▸'}</button>
          ${escapeText(p)}${l !== undefined && 'state' in l ? html` <span class="state">(${l.state})</span>` : null}
        </h2>
        <ul class="tree">${folderRows(p, 0)}</ul>
      </section>`;
    })}
  `;
}
