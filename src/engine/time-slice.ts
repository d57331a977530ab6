/**
 * Keeps a long loop from holding the event loop: `await slice()` inside the loop gives the event loop a turn
 * (setImmediate: pending I/O, timers and `status` queries run) once `budgetMs` passed since the last turn, and
 * costs nothing otherwise. A loop whose awaits all resolve at once (results already there) runs in microtasks,
 * which never let I/O in: such a loop needs this.
 */
export function timeSlicer(budgetMs = 20, now: () => number = () => performance.now()): () => Promise<void> {
  let since = now();
  return async () => {
    if (now() - since < budgetMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    since = now();
  };
}
