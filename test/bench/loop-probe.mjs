/**
 * Loaded into the daemon by the churn row (`node --import`): tells a stall of the daemon's own work from one where
 * the machine gave it no CPU. Every 5 ms a timer notes the wall time and the main thread's CPU time (Linux:
 * /proc/self/task/PID/stat, utime + stime, in 10 ms ticks); a turn of the event loop that came more than 50 ms
 * late is written to BOXSYNC_LOOP_PROBE_FILE as "wallMs cpuMs". A stall whose CPU is most of its wall time was
 * the daemon's own work; one with little CPU was waiting for a core (two busy loops beside it, a CI run).
 */
import { appendFileSync, readFileSync } from 'node:fs';

const file = process.env.BOXSYNC_LOOP_PROBE_FILE;
if (file) {
  const statPath = `/proc/self/task/${process.pid}/stat`;
  const cpuMs = () => {
    const s = readFileSync(statPath, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  };
  let lastWall = performance.now();
  let lastCpu = cpuMs();
  setInterval(() => {
    const wall = performance.now();
    const cpu = cpuMs();
    if (wall - lastWall > 50) appendFileSync(file, `${(wall - lastWall).toFixed(1)} ${cpu - lastCpu}\n`);
    lastWall = wall;
    lastCpu = cpu;
  }, 5).unref();
}
