/**
 * A big download's body read on a file worker thread (issue 29 point 4): the GET of a pre-signed download URL (no
 * token: the main thread asked Box's API for it), its bytes hashed and written into the temp file's open fd there,
 * so the main thread neither receives, hashes nor writes them, and the download's Buffers (one per socket read) are
 * made and dropped in the thread's small heap instead of being promoted in the main thread's (README, Performance:
 * about one full collection of the main thread per 9 MB downloaded). download.ts keeps every decision: the API call,
 * the 302, the resumes, the SHA-1 check; temp-file.ts's `fillFromUrl` is the way in (TempFile port).
 *
 * The job (file-workers.ts `fetch`) reads the body once, from `position`: the bytes an earlier attempt left in the
 * file are read back and hashed first, and `range` asks for the rest; a host that answers 200 to a Range request is
 * read from byte 0 (the file truncated first). It stops, and says why, on: a body over `limit` bytes (the announced
 * total or the bytes sent), the download's deadline passed, no byte for `stallMs` (or no connection in
 * `connectTimeoutMs`), a cancel (the run's signal), a broken connection, a failed write. Its answer is how many
 * bytes the file now holds, all hashed and written (`written`), and with a whole body their SHA-1. A job with
 * `hash: false` (a zip download's scratch archive: writeUrlToFile) writes the bytes without hashing them.
 */

import type { UrlFillResult } from '../ports/local-fs.js';

/** The answer of a `fetch` job (FileJobResult.fetched): the port's UrlFillResult, `write` failures included. */
export type FetchOutcome = UrlFillResult;

/** A thread's scavenge comes after this many bytes received (peak RSS; README, Performance). */
export const GC_EVERY_BYTES = 8 * 1024 * 1024;

/** Progress is posted every this many bytes. */
export const FETCH_PROGRESS_BYTES = 4 * 1024 * 1024;

/**
 * The worker's side (plain CommonJS inside file-workers.ts's WORKER_CODE, which defines `fs`, `createHash`,
 * `parentPort` and `reply`). `fetchJob(m)` answers with `{ fetched }`; `cancelFetch(id)` ends one in flight.
 */
export const FETCH_CODE = `
const fetching = new Map();
// The thread's young generation is small and a body's Buffers are external memory: V8 would let dead ones pile up
// to its external limit (64 MiB) before it collects them. A scavenge every GC_EVERY_BYTES received frees them.
let scavenge = null;
try {
  require('node:v8').setFlagsFromString('--expose-gc');
  const gc = require('node:vm').runInNewContext('gc');
  if (typeof gc === 'function') scavenge = () => gc({ type: 'minor' });
} catch {}
let sinceScavenge = 0;
const timedOutErr = (what) => Object.assign(new Error("Timeout awaiting '" + what + "'"), { code: 'ETIMEDOUT' });
// The temp file's fd is open for writing only: its first n bytes are read through a descriptor of their own.
function hashPrefix(path, n, h) {
  if (n === 0) return;
  const fd = fs.openSync(path, 'r');
  try {
    const b = Buffer.allocUnsafe(Math.min(n, 1024 * 1024));
    for (let at = 0; at < n; ) {
      const got = fs.readSync(fd, b, 0, Math.min(b.length, n - at), at);
      if (!(got > 0)) throw Object.assign(new Error('the temp file holds fewer bytes than were written to it'), { code: 'EIO' });
      h.update(got === b.length ? b : b.subarray(0, got));
      at += got;
    }
  } finally {
    fs.closeSync(fd);
  }
}
function announcedTotal(headers, offset) {
  const range = headers['content-range'];
  if (typeof range === 'string') {
    const r = /\\/(\\d+)\\s*$/.exec(range);
    if (r) return Number(r[1]);
  }
  const len = headers['content-length'];
  return typeof len === 'string' ? offset + Number(len) : 0;
}
function cancelFetch(id) {
  const stop = fetching.get(id);
  if (stop !== undefined) stop();
}
function fetchJob(m) {
  const hashing = m.hash !== false;
  let hash = createHash('sha1');
  let at = m.position;
  let status = 0;
  let total = 0;
  let restarted = false;
  let over = false;
  let connectTimer;
  const end = (failed) => {
    if (over) return;
    over = true;
    clearTimeout(connectTimer);
    fetching.delete(m.id);
    const out = { status, written: at, total };
    if (restarted) out.restarted = true;
    if (failed !== undefined) out.failed = failed;
    else if ((status === 200 || status === 206) && hashing) out.sha1 = hash.digest('hex');
    reply(m, m.fd, { fetched: out });
  };
  const why = (kind, e) => ({ kind, message: String((e && e.message) || e), ...(e && typeof e.code === 'string' ? { code: e.code } : {}) });
  try {
    if (hashing) hashPrefix(m.path, at, hash);
  } catch (e) {
    return end(why('write', e));
  }
  const deadline = Date.now() + m.deadlineInMs;
  let url;
  try {
    url = new URL(m.url);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not an http(s) URL');
  } catch (e) {
    return end(why('open', e));
  }
  const mod = require(url.protocol === 'https:' ? 'node:https' : 'node:http');
  let req;
  try {
    req = mod.request(url, { method: 'GET', headers: m.headers });
  } catch (e) {
    return end(why('open', e));
  }
  let answered = false;
  fetching.set(m.id, () => {
    end({ kind: 'aborted', message: 'cancelled' });
    req.destroy();
  });
  connectTimer = setTimeout(() => req.destroy(timedOutErr('connect')), m.connectTimeoutMs);
  req.once('socket', (socket) => {
    if (socket.connecting) socket.once('connect', () => clearTimeout(connectTimer));
    else clearTimeout(connectTimer);
  });
  // No byte in either direction for stallMs, before the answer or inside the body: a stall.
  req.setTimeout(m.stallMs, () => req.destroy(timedOutErr('socket')));
  req.on('error', (e) => end(why(answered ? 'body' : 'open', e)));
  req.once('response', (res) => {
    answered = true;
    clearTimeout(connectTimer);
    status = res.statusCode || 0;
    // end() before destroy(): destroying the answer emits 'aborted' at once, which would end it as a cut body.
    if (status !== 200 && status !== 206) {
      end();
      return res.destroy();
    }
    if (status === 200 && at > 0) {
      // The host ignored Range: the file is read again from byte 0.
      try {
        fs.ftruncateSync(m.fd, 0);
      } catch (e) {
        end(why('write', e));
        return res.destroy();
      }
      hash = createHash('sha1');
      at = 0;
      restarted = true;
    }
    total = announcedTotal(res.headers, at);
    if (m.limit !== null && total > m.limit) {
      end({ kind: 'oversize', message: 'the download answer announces ' + total + ' bytes' });
      return res.destroy();
    }
    let told = at;
    res.on('data', (chunk) => {
      if (over) return;
      if (m.limit !== null && at + chunk.length > m.limit) {
        end({ kind: 'oversize', message: 'the server sent more than ' + m.limit + ' bytes' });
        return res.destroy();
      }
      if (Date.now() > deadline) {
        end({ kind: 'slow', message: 'too slow (' + at + ' bytes by its deadline)' });
        return res.destroy();
      }
      if (hashing) hash.update(chunk);
      try {
        for (let done = 0; done < chunk.length; ) {
          const n = fs.writeSync(m.fd, chunk, done, chunk.length - done, at + done);
          if (!(n > 0)) throw Object.assign(new Error('write made no progress'), { code: 'EIO' });
          done += n;
        }
      } catch (e) {
        end(why('write', e));
        return res.destroy();
      }
      at += chunk.length;
      sinceScavenge += chunk.length;
      if (scavenge !== null && sinceScavenge >= ${GC_EVERY_BYTES}) {
        sinceScavenge = 0;
        scavenge();
      }
      if (at - told >= ${FETCH_PROGRESS_BYTES}) {
        told = at;
        parentPort.postMessage({ progress: m.id, done: at });
      }
    });
    res.on('end', () => end());
    res.on('aborted', () => end({ kind: 'body', message: 'the connection closed inside the body', code: 'ECONNRESET' }));
    res.on('error', (e) => end(why('body', e)));
  });
  req.end();
}
`;
