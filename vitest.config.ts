import { defineConfig } from 'vitest/config';
import LongestFirst from './test/helpers/sequencer.js';

/**
 * Test files that replace modules (vi.mock) need a module registry of their own; every other file
 * shares its worker's registry with the files run before it. Importing the product's modules
 * afresh for each of ~160 files (zod, openai, apache-arrow, the jury) was most of the suite's
 * in-process CPU; sharing them cuts it by about three quarters (docs/benchmarks.md, "Test suite").
 */
const ISOLATED = ['test/llm/generate.test.ts'];

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    // Writes per-file CPU seconds when RJ_TEST_CPU_LOG is set; a no-op otherwise.
    setupFiles: ['test/helpers/cpu-log.ts'],
    // Longest files first (test/durations.json; refresh it with scripts/test-durations.mjs).
    sequence: { sequencer: LongestFirst },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Three workers on the 2-core machines: many integration tests spend most of their time waiting
    // on a broker, an S3 server or a CLI child (an outage test waits out its outage), and a third
    // worker fills those gaps. Tests wait on progress, never on a wall-clock budget, so the extra
    // contention slows them without failing them.
    pool: 'forks',
    maxWorkers: 3,
    projects: [
      { extends: true, test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: ISOLATED, isolate: false } },
      { extends: true, test: { name: 'isolated', include: ISOLATED, isolate: true } },
    ],
  },
});
