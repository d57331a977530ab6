/**
 * Preloaded into a process by `test/bench/profile-mirror.ts` (PROFILE_THREAD_CPU=1, `node --import`): when the
 * process exits, prints the CPU seconds (user + system) of its main thread and of all its other threads together
 * that are still running then (worker threads, libuv's pool, V8's helpers; a thread that ended before is not
 * counted), from /proc/self/task/TID/stat, on stderr.
 */
import { readdirSync, readFileSync } from 'node:fs';

const TICKS = 100; // USER_HZ on Linux
const cpuOf = (tid) => {
  try {
    const f = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return (Number(rest[11]) + Number(rest[12])) / TICKS;
  } catch {
    return 0;
  }
};
process.on('exit', () => {
  const main = cpuOf(process.pid);
  let others = 0;
  for (const tid of readdirSync('/proc/self/task')) if (Number(tid) !== process.pid) others += cpuOf(tid);
  process.stderr.write(`thread CPU: main ${main.toFixed(2)} s, other threads ${others.toFixed(2)} s\n`);
});
