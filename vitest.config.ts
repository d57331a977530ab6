import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Real child processes, real HTTP and real SQLite: give them room, and keep CPU-heavy files from
    // starving each other on a 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: process.env.CI ? ['default'] : ['default'],
  },
});
