import { defineConfig } from 'vitest/config';
import { sdkCommonsPlugin } from './test/sdk-suite/plugin.js';
import { IN_SCOPE_FILES, SDK_SRC, SDK_TEST_DIR } from './test/sdk-suite/scope.js';

export default defineConfig({
  test: {
    // Real child processes, real HTTP and real SQLite: give them room, and keep CPU-heavy files from
    // starving each other on a 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: process.env.CI ? ['default'] : ['default'],
    projects: [
      {
        extends: true,
        // The native inotify addon is built by `npm ci`; a checkout without it builds it once here.
        test: { name: 'boxsync', include: ['test/**/*.test.ts'], globalSetup: ['test/support/native-build.ts'] },
      },
      {
        // Box's own SDK integration tests (box-node-sdk, pinned), run from the installed package against
        // box-server: see test/sdk-suite/ and the README.
        extends: true,
        plugins: [sdkCommonsPlugin(SDK_TEST_DIR)],
        resolve: { alias: [{ find: /^@\//, replacement: `${SDK_SRC}/` }] },
        test: {
          name: 'box-sdk',
          dir: SDK_TEST_DIR,
          include: IN_SCOPE_FILES.map((f) => `${SDK_TEST_DIR}/${f}`),
          exclude: [],
          globals: true,
          // The SDK's sources are the same for every file: import them once per worker, not once per file.
          isolate: false,
          setupFiles: ['test/sdk-suite/setup.ts'],
          globalSetup: ['test/sdk-suite/global-setup.ts'],
          server: { deps: { inline: [/box-node-sdk[\\/]src[\\/]/] } },
        },
      },
    ],
  },
});
