/**
 * A big download's body read on a file worker thread (issue 29 point 4): the GET of a pre-signed download URL (no
 * token: the main thread asked Box's API for it), its bytes hashed and written into the temp file's open fd there,
 * so the main thread neither receives, hashes nor writes them (README, Performance: about one full collection of the
 * main thread per 9 MB downloaded when it did). download.ts keeps every decision: the API call, the 302, the resumes,
 * the SHA-1 check; temp-file.ts's `fillFromUrl` is the way in (TempFile port).
 *
 * The GET is HTTP/1.1 on a kept connection to the same host when the thread has one idle (keep-alive, as node:http's
 * global agent kept them: no TCP and TLS handshake per download; an idle one is closed after KEEP_IDLE_MS, and a GET
 * whose kept connection was closed meanwhile is sent again once on a new one), else on a new one (tls.connect for
 * https, which checks the certificate as node:https does) read through net's `onread` into one of the thread's reused buffers
 * (BODY_BUFFER_BYTES), not node:http: node:http makes a new Buffer per socket read and copies each body slice into
 * another, and those Buffers' external memory set the thread's collections and its peak RSS. The answer's head is
 * parsed here (status, Content-Length, Content-Range, chunked framing, 1xx answers skipped), and the body's bytes
 * gather in the buffer and are hashed and written when it is nearly full: one write per few hundred KiB instead of
 * one per socket read.
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

/** A fetch's read buffer (worker-side `bodyBuffers`): its body bytes are written once this is nearly full. */
export const BODY_BUFFER_BYTES = 512 * 1024;
/** The least room a socket read is given: below it, the gathered bytes are hashed and written first. */
export const BODY_READ_MIN = 64 * 1024;
/** Read buffers a thread keeps for its next fetches (more in flight at once get their own, dropped after). */
export const BODY_BUFFERS_KEPT = 4;

/** An idle kept connection is closed after this long (under the 5 s a Node server keeps one by default). */
export const KEEP_IDLE_MS = 4_000;
/** Idle kept connections per host, port and scheme. */
export const KEEP_IDLE_MAX = 4;

/** Progress is posted every this many bytes. */
export const FETCH_PROGRESS_BYTES = 4 * 1024 * 1024;

/**
 * The worker's side (plain CommonJS inside file-workers.ts's WORKER_CODE, which defines `fs`, `createHash`,
 * `parentPort` and `reply`). `fetchJob(m)` answers with `{ fetched }`; `cancelFetch(id)` ends one in flight.
 */
export const FETCH_CODE = `
const fetching = new Map();
// Each fetch in flight reads into a buffer of its own from this pool (kept for the next one: a thread frees buffers
// only at its rare garbage collections); its body bytes gather there and are hashed and written once fewer than
// BODY_READ_MIN bytes are left free, so a download makes no Buffer per socket read and few, large writes.
const bodyBuffers = [];
const BODY_READ_MIN = ${BODY_READ_MIN};
const takeBodyBuffer = () => bodyBuffers.pop() || Buffer.allocUnsafeSlow(${BODY_BUFFER_BYTES});
const giveBodyBuffer = (b) => {
  if (bodyBuffers.length < ${BODY_BUFFERS_KEPT}) bodyBuffers.push(b);
};
// Kept connections (HTTP/1.1 keep-alive), idle, by scheme, host and port: an answer read whole leaves its connection
// here for the next GET to the same host, which then pays no new TCP and TLS handshake (as node:http's global agent
// did). A socket's reads go to the job that holds it (sock.job); an idle one that reads anything, ends, errs or
// stays idle KEEP_IDLE_MS is closed. Idle ones do not keep the thread alive (unref).
const idleSockets = new Map();
const idleScratch = Buffer.allocUnsafeSlow(1024);
function takeIdle(key) {
  const list = idleSockets.get(key);
  while (list !== undefined && list.length > 0) {
    const sock = list.pop();
    if (list.length === 0) idleSockets.delete(key);
    if (!sock.destroyed) {
      sock.ref();
      return sock;
    }
  }
  return undefined;
}
function putIdle(key, sock) {
  sock.job = null;
  const list = idleSockets.get(key) || [];
  if (list.length >= ${KEEP_IDLE_MAX}) return sock.destroy();
  list.push(sock);
  idleSockets.set(key, list);
  sock.setTimeout(${KEEP_IDLE_MS});
  sock.unref();
}
function dropIdle(sock) {
  sock.job = null;
  for (const [key, list] of idleSockets) {
    const i = list.indexOf(sock);
    if (i < 0) continue;
    list.splice(i, 1);
    if (list.length === 0) idleSockets.delete(key);
  }
  sock.destroy();
}
function openSocket(tls, host, port) {
  let sock;
  const opts = {
    host,
    port,
    // net asks for the buffer of the next read when the socket is made and after each read: the first read of a job
    // (new socket, or kept one) lands in the scratch buffer, and the job copies those few bytes into its own.
    onread: {
      buffer: () => (sock !== undefined && sock.job ? sock.job.readBuffer() : idleScratch),
      callback: (n, into) => {
        const job = sock.job;
        if (!job) {
          dropIdle(sock);
          return false;
        }
        // A job that ended here left the connection kept (job null, not destroyed): go on reading, to see it close.
        return job.onRead(n, into) || (sock.job === null && !sock.destroyed);
      },
    },
  };
  sock = tls ? require('node:tls').connect({ ...opts, servername: require('node:net').isIP(host) ? undefined : host }) : require('node:net').connect(opts);
  sock.job = null;
  sock.on('timeout', () => (sock.job ? sock.job.onTimeout() : dropIdle(sock)));
  sock.on('error', (e) => (sock.job ? sock.job.onError(e) : dropIdle(sock)));
  sock.on('close', () => (sock.job ? sock.job.onClose() : dropIdle(sock)));
  return sock;
}
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
  // The request goes out on a kept connection to the host, or a new one, whose reads land in a buffer of this
  // thread's pool (net's onread): no Buffer is made per read, and the body's bytes are hashed and written from the
  // buffer once a run of them has gathered there (bodyBuffers).
  const tls = url.protocol === 'https:';
  const port = url.port !== '' ? Number(url.port) : tls ? 443 : 80;
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  let head = 'GET ' + (url.pathname || '/') + url.search + ' HTTP/1.1\\r\\nHost: ' + url.host + '\\r\\n';
  for (const k of Object.keys(m.headers)) {
    const v = String(m.headers[k]);
    if (/[\\r\\n]/.test(k) || /[\\r\\n]/.test(v)) return end(why('open', new Error('a header holds a line break')));
    const lk = k.toLowerCase();
    if (lk !== 'host' && lk !== 'connection') head += k + ': ' + v + '\\r\\n';
  }
  head += '\\r\\n';
  const key = (tls ? 'https:' : 'http:') + host + ':' + port;
  const buf = takeBodyBuffer();
  let socket;
  let answered = false;
  // The connection was kept from an earlier GET, no byte of this answer has come, the body was read whole with no
  // byte after it, and the answer lets the connection be kept.
  let reused = false;
  let heard = false;
  let complete = false;
  let keepAlive = false;
  // The answer's head (latin1) until its blank line; then the body: 'length' (bodyLeft bytes), 'chunked', or 'eof'.
  let headText = '';
  let framing = 'eof';
  let bodyLeft = 0;
  // chunked: 0 size digits, 1 size line's rest, 2 data (bodyLeft), 3 CR after data, 4 LF after data, 5 trailer line start, 6 trailer line
  let cstate = 0;
  let csize = 0;
  let cdigits = 0;
  let fill = 0; // body bytes gathered in buf, not yet hashed nor written
  let told = at;
  let held = true;
  const drop = () => {
    if (held) giveBodyBuffer(buf);
    held = false;
  };
  const release = (keep) => {
    if (socket !== undefined) {
      if (keep) putIdle(key, socket);
      else {
        socket.job = null;
        socket.destroy();
      }
    }
    drop();
  };
  // Ends the job; the body bytes gathered so far are written first, whatever the reason (a resume goes on after them).
  const finish = (failed) => {
    if (over) return;
    if (!flush()) return;
    end(failed);
    release(failed === undefined && complete && keepAlive);
  };
  // Hash and write the gathered bytes; false: the job has ended (a failed write).
  const flush = () => {
    if (fill === 0) return true;
    const n = fill;
    fill = 0;
    if (hashing) hash.update(n === buf.length ? buf : buf.subarray(0, n));
    try {
      for (let done = 0; done < n; ) {
        const w = fs.writeSync(m.fd, buf, done, n - done, at + done);
        if (!(w > 0)) throw Object.assign(new Error('write made no progress'), { code: 'EIO' });
        done += w;
      }
    } catch (e) {
      end(why('write', e));
      release(false);
      return false;
    }
    at += n;
    if (at - told >= ${FETCH_PROGRESS_BYTES}) {
      told = at;
      parentPort.postMessage({ progress: m.id, done: at });
    }
    return true;
  };
  // n body bytes that arrived at buf[from]: kept after the gathered ones (moved down when framing lay between).
  const body = (from, n) => {
    if (n === 0) return true;
    if (m.limit !== null && at + fill + n > m.limit) {
      finish({ kind: 'oversize', message: 'the server sent more than ' + m.limit + ' bytes' });
      return false;
    }
    if (from !== fill) buf.copyWithin(fill, from, from + n);
    fill += n;
    return true;
  };
  // The answer's head is complete: its status and headers decide how the body is framed.
  const onHead = (text) => {
    const lines = text.split('\\r\\n');
    const st = /^HTTP\\/1\\.[01] (\\d{3})/.exec(lines[0]);
    if (st === null) return finish(why('open', Object.assign(new Error('not an HTTP/1.1 answer'), { code: 'HPE_INVALID_CONSTANT' })));
    const headers = {};
    for (let i = 1; i < lines.length; i++) {
      const c = lines[i].indexOf(':');
      if (c <= 0) continue;
      const k = lines[i].slice(0, c).trim().toLowerCase();
      const v = lines[i].slice(c + 1).trim();
      headers[k] = headers[k] === undefined ? v : headers[k] + ', ' + v;
    }
    const code = Number(st[1]);
    if (code >= 100 && code < 200) return 'again';
    keepAlive = lines[0].startsWith('HTTP/1.1') && !/(^|,)\\s*close\\s*(,|$)/i.test(headers.connection || '');
    answered = true;
    clearTimeout(connectTimer);
    status = code;
    if (status !== 200 && status !== 206) return finish();
    if (status === 200 && at > 0) {
      // The host ignored Range: the file is read again from byte 0.
      try {
        fs.ftruncateSync(m.fd, 0);
      } catch (e) {
        return finish(why('write', e));
      }
      hash = createHash('sha1');
      at = 0;
      told = 0;
      restarted = true;
    }
    total = announcedTotal(headers, at);
    if (m.limit !== null && total > m.limit) return finish({ kind: 'oversize', message: 'the download answer announces ' + total + ' bytes' });
    const te = headers['transfer-encoding'];
    if (typeof te === 'string' && /chunked\\s*$/i.test(te)) framing = 'chunked';
    else if (typeof headers['content-length'] === 'string') {
      bodyLeft = Number(headers['content-length']);
      if (!Number.isSafeInteger(bodyLeft) || bodyLeft < 0) return finish(why('open', Object.assign(new Error('a bad Content-Length'), { code: 'HPE_INVALID_CONTENT_LENGTH' })));
      framing = 'length';
    }
    return 'body';
  };
  const cut = () => finish({ kind: 'body', message: 'the connection closed inside the body', code: 'ECONNRESET' });
  // The body's bytes buf[from, to): framing consumed, data kept; ends the job at the body's end.
  const onBody = (from, to) => {
    if (framing === 'eof') return body(from, to - from);
    if (framing === 'length') {
      const n = Math.min(bodyLeft, to - from);
      bodyLeft -= n;
      if (!body(from, n)) return false;
      if (bodyLeft === 0) {
        complete = n === to - from;
        finish();
        return false;
      }
      return true;
    }
    for (let i = from; i < to; ) {
      if (cstate === 2) {
        const n = Math.min(bodyLeft, to - i);
        if (!body(i, n)) return false;
        bodyLeft -= n;
        i += n;
        if (bodyLeft === 0) cstate = 3;
        continue;
      }
      const b = buf[i++];
      if (cstate === 0) {
        const d = b >= 48 && b <= 57 ? b - 48 : b >= 97 && b <= 102 ? b - 87 : b >= 65 && b <= 70 ? b - 55 : -1;
        if (d >= 0 && cdigits < 13) {
          csize = csize * 16 + d;
          cdigits++;
          continue;
        }
        if (cdigits === 0 || d >= 0) {
          finish(why('body', Object.assign(new Error('a bad chunk size'), { code: 'HPE_INVALID_CHUNK_SIZE' })));
          return false;
        }
        cstate = 1;
      }
      if (cstate === 1) {
        if (b !== 10) continue;
        cdigits = 0;
        if (csize === 0) cstate = 5;
        else {
          bodyLeft = csize;
          cstate = 2;
        }
        csize = 0;
      } else if (cstate === 3 || cstate === 4) {
        if (b === 13 && cstate === 3) cstate = 4;
        else if (b === 10) cstate = 0;
        else {
          finish(why('body', Object.assign(new Error('no line end after a chunk'), { code: 'HPE_STRICT' })));
          return false;
        }
      } else if (cstate === 5) {
        // The trailer: lines until an empty one, which ends the body.
        if (b === 10) {
          complete = i === to;
          finish();
          return false;
        }
        if (b !== 13) cstate = 6;
      } else if (cstate === 6 && b === 10) cstate = 5;
    }
    return true;
  };
  let inBody = false;
  const onRead = (n) => {
    if (over) return false;
    let from = fill;
    const to = fill + n;
    if (!inBody) {
      headText += buf.latin1Slice(from, to);
      for (;;) {
        const e = headText.indexOf('\\r\\n\\r\\n');
        if (e < 0) {
          if (headText.length > 65536) finish(why('open', Object.assign(new Error('the answer\\'s head is too long'), { code: 'HPE_HEADER_OVERFLOW' })));
          return !over;
        }
        const rest = headText.length - (e + 4);
        const r = onHead(headText.slice(0, e));
        if (r === 'again') {
          headText = headText.slice(e + 4);
          continue;
        }
        if (r !== 'body' || over) return false;
        inBody = true;
        from = to - rest;
        headText = '';
        break;
      }
    }
    if (Date.now() > deadline) {
      finish({ kind: 'slow', message: 'too slow (' + (at + fill) + ' bytes by its deadline)' });
      return false;
    }
    if (!onBody(from, to)) return false;
    if (buf.length - fill < BODY_READ_MIN && !flush()) return false;
    return true;
  };
  // A kept connection the host closed meanwhile fails before any byte of the answer: the GET is sent again, once, on
  // a new connection (as node:http's agent does for a request on a reused socket).
  const job = {
    readBuffer: () => (fill === 0 ? buf : buf.subarray(fill)),
    onRead: (n, into) => {
      heard = true;
      if (into.buffer !== buf.buffer || into.byteOffset !== buf.byteOffset + fill) into.copy(buf, fill, 0, n);
      return onRead(n);
    },
    onTimeout: () => socket.destroy(timedOutErr('socket')),
    onError: (e) => (reused && !heard && !over ? connect(true) : finish(why(answered ? 'body' : 'open', e))),
    onClose: () => {
      if (over) return;
      if (reused && !heard) return connect(true);
      if (!answered) return finish(why('open', Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })));
      if (framing === 'eof') return finish();
      cut();
    },
  };
  const connect = (fresh) => {
    if (socket !== undefined) {
      socket.job = null;
      socket.destroy();
    }
    socket = fresh ? undefined : takeIdle(key);
    reused = socket !== undefined;
    if (!reused) {
      try {
        socket = openSocket(tls, host, port);
      } catch (e) {
        socket = undefined;
        return finish(why('open', e));
      }
      const sock = socket;
      connectTimer = setTimeout(() => sock.destroy(timedOutErr('connect')), m.connectTimeoutMs);
      sock.once(tls ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer));
    }
    socket.job = job;
    // No byte in either direction for stallMs, before the answer or inside the body: a stall.
    socket.setTimeout(m.stallMs);
    socket.write(head);
  };
  fetching.set(m.id, () => finish({ kind: 'aborted', message: 'cancelled' }));
  connect(false);
}
`;

