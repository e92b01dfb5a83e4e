import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Writes per-file CPU seconds when RJ_TEST_CPU_LOG is set; a no-op otherwise.
    setupFiles: ['test/helpers/cpu-log.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Integration tests start loopback servers; two workers suit the 2-core machines.
    pool: 'forks',
    maxWorkers: 2,
  },
});
