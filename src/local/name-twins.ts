/**
 * "Would this new name clash on Box with one already in its folder?" Box compares names case-insensitively and
 * after Unicode normalization; Linux does not. So the local adapter, before it puts a NEW entry at a path (a
 * download, a new folder, a move's target), looks for a sibling whose name folds to the same key. One there
 * means the disk changed after the plan (the user created it meanwhile): writing would make a pair of names Box
 * cannot hold, a clash boxsync itself made. The write is refused as `local_changed`, and the next plan sees both.
 *
 * Listing a folder before every write would be quadratic for a first mirror of a big folder, so each folder's
 * listing is cached with its stamp (inode, mtime, ctime), and our own writes update the cached names. A new name
 * of ours moves the folder's stamp too, so the check and the write run as one step per folder (`putNew`: the
 * writes into one folder take turns; the transfers themselves still run side by side), and right after the
 * write the folder is stat-ed again and the new stamp kept: our own writes do not make the next check read the
 * folder again (2,000 downloads into one folder read it 2,000 times, a third of that mirror's time). The price:
 * a twin someone else creates in the instant between that check and that stat is taken for ours and missed
 * here. A folder whose stamp moved otherwise is read again at once when it holds up to 2,000 names, and at most
 * once a second when it is bigger: in such a folder a twin created by someone else in the last second can be
 * missed. A missed twin is caught one step later: the planner sees both names and reports the pair as a clash;
 * nothing is lost.
 */
import type { Stats } from 'node:fs';
import { foldKey } from '../core/paths.js';
import { viaCallback, type FsModule } from './fs-module.js';
import { isTempName } from './temp-name.js';

interface Listing {
  stamp: string;
  /** When the stamp was last seen to match the folder (a check, or a re-stamp after our own write). */
  checkedAtMs: number;
  readonly readAtMs: number;
  readonly count: number;
  readonly byKey: Map<string, string[]>;
}

const MAX_FOLDERS = 256;
const SMALL_FOLDER = 2_000;
const BIG_FOLDER_REREAD_MS = 1_000;
/** Our own write re-stamps a listing only when it was checked this recently. */
const RESTAMP_WITHIN_MS = 1_000;

export class NameTwins {
  readonly #fs: FsModule;
  readonly #dirs = new Map<string, Listing>();
  /** Per folder, the end of the last `putNew` queued there. */
  readonly #turns = new Map<string, Promise<void>>();

  readonly #now: () => number;

  constructor(fs: FsModule, now: () => number = Date.now) {
    this.#fs = fs;
    this.#now = now;
  }

  /** A sibling of `name` in `dirAbs` (other than `name` itself and `except`) that Box would take for the same name. */
  async twinOf(dirAbs: string, name: string, except?: string): Promise<string | undefined> {
    const listing = await this.#listing(dirAbs);
    if (listing === undefined) return undefined;
    return listing.byKey.get(foldKey(name))?.find((n) => n !== name && n !== except);
  }

  /**
   * Puts a new `name` in `dirAbs` with `put` unless a twin of it is there (then `onTwin` throws, or `put` runs
   * anyway when `onTwin` returns). Writes into one folder take turns through here, so the stamp taken after
   * `put` is ours alone (see the top of this file).
   */
  async putNew<T>(dirAbs: string, name: string, except: string | undefined, onTwin: (twin: string) => void, put: () => Promise<T>): Promise<T> {
    const prev = this.#turns.get(dirAbs) ?? Promise.resolve();
    let done!: () => void;
    const mine = new Promise<void>((r) => (done = r));
    const chained = prev.then(() => mine);
    this.#turns.set(dirAbs, chained);
    await prev;
    try {
      const twin = await this.twinOf(dirAbs, name, except);
      if (twin !== undefined) onTwin(twin);
      const out = await put();
      this.noteChanged(dirAbs, name, except ?? null);
      const listing = this.#dirs.get(dirAbs);
      if (listing !== undefined && this.#now() - listing.checkedAtMs <= RESTAMP_WITHIN_MS) {
        const stamp = await this.#stamp(dirAbs);
        if (stamp !== undefined) {
          listing.stamp = stamp;
          listing.checkedAtMs = this.#now();
        }
      }
      return out;
    } finally {
      done();
      if (this.#turns.get(dirAbs) === chained) this.#turns.delete(dirAbs);
    }
  }

  /** Our own write added or removed a name in `dirAbs`: the cached listing follows (its stamp does not). */
  noteChanged(dirAbs: string, added: string | null, removed: string | null): void {
    const listing = this.#dirs.get(dirAbs);
    if (listing === undefined) return;
    if (removed !== null) {
      const k = foldKey(removed);
      const rest = (listing.byKey.get(k) ?? []).filter((n) => n !== removed);
      if (rest.length > 0) listing.byKey.set(k, rest);
      else listing.byKey.delete(k);
    }
    if (added !== null) {
      const k = foldKey(added);
      const names = listing.byKey.get(k) ?? [];
      if (!names.includes(added)) listing.byKey.set(k, [...names, added]);
    }
  }

  async #listing(dirAbs: string): Promise<Listing | undefined> {
    const stamp = await this.#stamp(dirAbs);
    if (stamp === undefined) return undefined;
    const cached = this.#dirs.get(dirAbs);
    if (cached !== undefined && cached.stamp === stamp) {
      cached.checkedAtMs = this.#now();
      return cached;
    }
    if (cached !== undefined && cached.count > SMALL_FOLDER && this.#now() - cached.readAtMs < BIG_FOLDER_REREAD_MS) return cached;
    let names: string[];
    try {
      names = (await this.#fs.promises.readdir(dirAbs)).map(String);
    } catch {
      return undefined;
    }
    const byKey = new Map<string, string[]>();
    for (const n of names) {
      if (isTempName(n)) continue;
      const k = foldKey(n);
      const list = byKey.get(k);
      if (list === undefined) byKey.set(k, [n]);
      else list.push(n);
    }
    const listing: Listing = { stamp, checkedAtMs: this.#now(), readAtMs: this.#now(), count: names.length, byKey };
    this.#dirs.delete(dirAbs);
    this.#dirs.set(dirAbs, listing);
    if (this.#dirs.size > MAX_FOLDERS) this.#dirs.delete(this.#dirs.keys().next().value!);
    return listing;
  }

  async #stamp(dirAbs: string): Promise<string | undefined> {
    try {
      // stat, not lstat: the root folder itself may be a symlink to the folder it stands for.
      const st = await viaCallback<[string], Stats>(this.#fs.stat, (p) => this.#fs.promises.stat(p), dirAbs);
      return `${st.ino}:${st.mtimeMs}:${st.ctimeMs}`;
    } catch {
      return undefined;
    }
  }
}
