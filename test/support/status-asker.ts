/**
 * Ask a daemon for its status all along a workload (every `everyMs` once the last answer came), keeping how many
 * answers came and the slowest. `stop()` ends the loop after the question in flight and gives the figures. An
 * `ask` that throws ends the loop and `stop()` rethrows (a test's status must answer); the benchmark catches its
 * own errors in `ask` instead.
 */
export interface StatusAsker {
  stop(): Promise<{ answered: number; slowestMs: number }>;
}

export function askStatusAllAlong(ask: () => Promise<boolean>, everyMs = 200): StatusAsker {
  let asking = true;
  let answered = 0;
  let slowestMs = 0;
  const loop = (async () => {
    while (asking) {
      const t0 = Date.now();
      if (await ask()) answered += 1;
      slowestMs = Math.max(slowestMs, Date.now() - t0);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    async stop() {
      asking = false;
      await loop;
      return { answered, slowestMs };
    },
  };
}
