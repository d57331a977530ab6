/**
 * A file worker thread's own full collections (issue 29 point 5). In a first mirror of 100,000 small files V8 let the
 * thread's heap grow to 20 MiB (16 MiB of it in use, garbage not yet collected included): each job's message, its
 * buffers and the closures that wait for its fsync outlive a scavenge or two of the 1 MiB young generation and are
 * promoted, and the old generation is collected only when it reaches V8's first limit. So every 256 messages the
 * thread looks at its heap and collects when it holds 4 MiB more than was live after its last collection: 15 MiB
 * (9-10 in use) in the same mirror, with no CPU cost the bench could see (README, Performance). `gc` is reached as the daemon's idle
 * collection reaches it (daemon/lifecycle/idle-reclaim.ts: the flag set at run time exposes it to a new context);
 * where it cannot be had, the thread runs as before.
 *
 * Plain CommonJS, put into file-workers.ts's WORKER_CODE: a message listener of its own, registered before the one
 * that runs the jobs.
 */
export const WORKER_GC_EVERY_MESSAGES = 256;
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
  let messages = 0;
  let live = 0;
  if (collect !== null) parentPort.on('message', () => {
    if (++messages % ${WORKER_GC_EVERY_MESSAGES} !== 0 || v8.getHeapStatistics().used_heap_size <= live + ${WORKER_GC_HEADROOM_BYTES}) return;
    collect();
    live = v8.getHeapStatistics().used_heap_size;
  });
}
`;
