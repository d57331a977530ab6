/**
 * Names of boxsync's own temporary files. A temp file lives in the same folder as its target (so the final rename
 * stays on one file system and is atomic) under a hidden name with TEMP_PREFIX, which the scanner skips, the
 * built-in ignore rules exclude and watchers therefore never report.
 *
 * The prefix alone does not make a file ours: a user may name a file `.boxsync-tmp-notes`. A
 * name of ours also carries a tag, an HMAC of its process part under a key kept in the state dir
 * (`TempNames`), so the cleanup of leftover partial downloads removes only files a boxsync of this state dir
 * made; any other file with the prefix is reported and left alone. The key lives in the state dir
 * (`<stateDir>/temp-key`, loadTempKey), so it outlives a journal that is rebuilt.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const TEMP_PREFIX = '.boxsync-tmp-';

/** Does the name have the temp prefix (ours or not): such names are never synced. */
export function isTempName(name: string): boolean {
  return name.startsWith(TEMP_PREFIX);
}

/** Random per process, so two processes never pick the same name; a counter makes each name of one process new. */
const PROCESS_PART = randomBytes(6).toString('hex');
const PART_CHARS = 12;
const TAG_CHARS = 12;
/** Tags of foreign process parts met by isOurs, remembered up to this many (a bound, not a cache of every name). */
const TAGS_KEPT = 64;

/** A fresh key for a state dir's temp names. */
export function newTempKey(): string {
  return randomBytes(16).toString('hex');
}

export const TEMP_KEY_FILE = 'temp-key';

/**
 * The state dir's temp-name key: read from `<stateDir>/temp-key`, made (mode 0600) when absent unless `create` is
 * false (the dry run writes nothing: a key of its own then, which no leftover on disk can carry).
 */
export function loadTempKey(stateDir: string, opts: { create: boolean }): string {
  const file = join(stateDir, TEMP_KEY_FILE);
  const read = (): string | undefined => {
    try {
      const text = readFileSync(file, 'utf8').trim();
      return /^[0-9a-f]{32}$/.test(text) ? text : undefined;
    } catch {
      return undefined;
    }
  };
  const found = read();
  if (found !== undefined || !opts.create) return found ?? newTempKey();
  try {
    // 'wx': a process that wrote it first wins, and its key is the one read back.
    writeFileSync(file, `${newTempKey()}\n`, { mode: 0o600, flag: 'wx' });
  } catch {
    // Written by another process meanwhile (read below), or the state dir refuses: then a key of this process.
  }
  return read() ?? newTempKey();
}

export class TempNames {
  readonly #key: string;
  readonly #mine: string;
  readonly #tags = new Map<string, string>();
  #counter = 0;

  /** `key`: the state dir's key (loadTempKey); without one, a key of this process alone. */
  constructor(key: string = newTempKey()) {
    this.#key = key;
    this.#mine = `${TEMP_PREFIX}${PROCESS_PART}${this.#tag(PROCESS_PART)}`;
  }

  /**
   * A fresh temp file name (short: the target's own name may already be near the 255-byte limit). Not random per
   * call: 8 random bytes a file cost more than the rest of naming it in a mirror of many small files.
   */
  next(): string {
    this.#counter += 1;
    return `${this.#mine}${this.#counter.toString(36)}`;
  }

  /** Was this name made by a boxsync with this key (this process or an earlier one of the same state dir)? */
  isOurs(name: string): boolean {
    if (!isTempName(name)) return false;
    const rest = name.slice(TEMP_PREFIX.length);
    const part = rest.slice(0, PART_CHARS);
    const tag = rest.slice(PART_CHARS, PART_CHARS + TAG_CHARS);
    const counter = rest.slice(PART_CHARS + TAG_CHARS);
    if (!/^[0-9a-f]{12}$/.test(part) || !/^[0-9a-z]+$/.test(counter)) return false;
    return tag === this.#tag(part);
  }

  #tag(part: string): string {
    let tag = this.#tags.get(part);
    if (tag === undefined) {
      tag = createHmac('sha256', this.#key).update(part).digest('hex').slice(0, TAG_CHARS);
      if (this.#tags.size >= TAGS_KEPT) this.#tags.clear();
      this.#tags.set(part, tag);
    }
    return tag;
  }
}
