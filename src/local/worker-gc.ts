/**
 * A file worker thread's own full collections (issue 29 point 5), once the thread is idle. In a first mirror of
 * 100,000 small files V8 let the thread's heap grow to 20 MiB (16 MiB of it in use, garbage not yet collected
 * included): each job's message, its buffers and the closures that wait for its fsync outlive a scavenge or two of
 * the 1 MiB young generation and are promoted, and the old generation is collected only when it reaches V8's first
 * limit. Stop 37 collected every 256 messages once the heap held 4 MiB more than was live after the last
 * collection: 15 MiB, but those full collections cost about 0.7 s of CPU at
 * 20,000 files and 1-5 s at 100,000 (pairs, issue 29 point 4; README, Performance). So the thread now collects only when it
 * has had no message for WORKER_GC_IDLE_MS (the end of a pass, an idle daemon), and then only when its heap holds
 * WORKER_GC_HEADROOM_BYTES more than after its last collection; during a transfer V8's own policy runs (peak RSS
 * about 2-6 MiB higher). `gc` is reached as the daemon's idle collection reaches it
 * (daemon/lifecycle/idle-reclaim.ts: the flag set at run time exposes it to a new context); where it cannot be
 * had, the thread runs as before.
 *
 * Plain CommonJS, put into file-workers.ts's WORKER_CODE: a message listener of its own, registered before the one
 * that runs the jobs (one timer, refreshed per message).
 */
export const WORKER_GC_IDLE_MS = 500;
export const WORKER_GC_HEADROOM_BYTES = 4 * 1024 * 1024;

export const WORKER_GC_CODE = `
{
  const v8 = require('node:v8');
  let collect = null;
  try {
    v8.setFlagsFromString('--expose-gc');
    const gc = require('node:vm').runInNewContext('gc');
    if (typeof gc === 'function') collect = gc;
  } catch {}
  let live = 0;
  let timer = null;
  const collectIfGrown = () => {
    if (v8.getHeapStatistics().used_heap_size <= live + ${WORKER_GC_HEADROOM_BYTES}) return;
    collect();
    live = v8.getHeapStatistics().used_heap_size;
  };
  if (collect !== null) parentPort.on('message', () => {
    if (timer !== null) timer.refresh();
    else (timer = setTimeout(collectIfGrown, ${WORKER_GC_IDLE_MS})).unref();
  });
}
`;
