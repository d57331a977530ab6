import { afterEach } from 'vitest';

/**
 * Wraps a factory of closable test fixtures (harnesses, servers) so that everything it made during a test is
 * closed after that test, in the order made, pass or fail. Call at the top level of a test file (it registers an
 * afterEach hook).
 */
export function closedAfterEach<A extends unknown[], T extends { close(): Promise<void> }>(make: (...args: A) => Promise<T>): (...args: A) => Promise<T> {
  const open: T[] = [];
  afterEach(async () => {
    for (const made of open.splice(0)) await made.close();
  });
  return async (...args) => {
    const made = await make(...args);
    open.push(made);
    return made;
  };
}
