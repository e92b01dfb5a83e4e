/**
 * Batch mode refuses what it cannot run well, with one line naming why: mode deliberation (a
 * moderator's turns are sequential) and kafka:// input (offsets commit in order).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runJob, type RunJobOptions } from '../../src/api/run-job.js';
import { UsageError } from '../../src/api/usage.js';
import { fastSimConfig, tempDir } from '../helpers/run-setup.js';

const dir = tempDir('batch-refusals');
const hooks = { signal: new AbortController().signal, onTotal: () => undefined, onProgress: () => undefined };
const base = (config: string, input?: string): RunJobOptions => ({ config, ...(input ? { input } : {}), out: join(dir, 'out'), formats: ['parquet'], maxRecords: 10, maxChars: 1 << 20, resume: true, batch: true, log: { format: 'text', debug: false } });

describe('batch mode refusals', () => {
  it('refuses mode deliberation, saying why', async () => {
    const config = fastSimConfig(dir, { mode: 'deliberation', moderator: { id: 'mod', endpoint: 'sim', model: 'sim-moderator' } });
    const err = await runJob(base(config), hooks).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toMatch(/^--batch: batch mode does not run mode "deliberation": its moderator's turns are sequential/);
  });

  it('refuses kafka:// input, saying why', async () => {
    const err = await runJob(base(fastSimConfig(dir), 'kafka://traces'), hooks).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toMatch(/^--batch: batch mode does not read kafka:\/\/ input: a partition's offsets are committed in order/);
  });
});
