/**
 * Batch prices outside the gateway: `estimate` projects each mode at batch rates beside the
 * online ones, and a budget counts what batched calls cost (the in-process simulator's Batch API,
 * reached by `runJob` in batch mode through the real openai client).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runJob, type RunJobOptions } from '../../src/api/run-job.js';
import { estimate } from '../../src/cli/estimate.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { LONG_TEST_MS } from '../helpers/progress.js';
import { fastSimConfig, tempDir, writeJsonl } from '../helpers/run-setup.js';

const dir = tempDir('batch-prices');
const input = writeJsonl(join(dir, 'in.jsonl'), syntheticRecords(40, { seed: 5, prefix: 'b' }));

describe('batch prices', () => {
  it('estimate: a batch rate where one is given, half the online price where not, online for an endpoint kept online', async () => {
    const config = fastSimConfig(dir, {
      endpoints: { remote: { kind: 'openai', base_url: 'http://127.0.0.1:9/v1' }, live: { kind: 'openai', base_url: 'http://127.0.0.1:9/v1', batch: { dialect: 'none' } } },
      jurors: [{ id: 'a', endpoint: 'remote', model: 'm' }],
      consolidator: { id: 'c', endpoint: 'live', model: 'n' },
      moderator: { id: 'mod', endpoint: 'remote', model: 'm' },
      prices: { m: { input_per_mtok: 1, output_per_mtok: 2, batch_input_per_mtok: 0.3 }, n: { input_per_mtok: 4, output_per_mtok: 8 } },
    });
    const e = await estimate({ config, input, sample: '5', seed: '1' });
    const single = e.modes.find((m) => m.mode === 'single')!;
    expect(single.batch_cost_usd).toBeCloseTo((single.tokens_in * 0.3 + single.tokens_out * 1) / 1e6, 9);
    const consolidation = e.modes.find((m) => m.mode === 'consolidation')!;
    // the consolidator's endpoint stays online: its calls cost the same either way
    const consolidatorOnline = consolidation.cost_usd! - single.cost_usd!;
    expect(consolidation.batch_cost_usd).toBeCloseTo(single.batch_cost_usd! + consolidatorOnline, 9);
    expect(e.modes.find((m) => m.mode === 'deliberation')!.batch_cost_usd).toBeNull();
  });

  it('a budget stops a batch-mode run cleanly, counting batched calls at the batch rate', async () => {
    const price = { input_per_mtok: 10, output_per_mtok: 40, batch_discount: 0.25 };
    const models = ['sim-juror-a', 'sim-juror-b', 'sim-juror-c', 'sim-consolidator'];
    const config = fastSimConfig(join(dir), { prices: Object.fromEntries(models.map((m) => [m, price])), endpoints: { sim: { kind: 'simulator', profile: join(dir, 'profile.yaml'), batch: { quiet_ms: 50, poll_interval_ms: 20 } } } });
    const out = join(dir, 'out');
    let stop: string | undefined;
    const opts: RunJobOptions = { config, input, out, formats: ['parquet'], concurrency: 4, maxRecords: 4, maxChars: 64 * 1024 * 1024, resume: true, cache: false, batch: true, budgetUsd: 0.05, log: { format: 'text', debug: false } };
    const c = await runJob(opts, { signal: new AbortController().signal, onTotal: () => undefined, onProgress: () => undefined, onBudgetStop: (r) => (stop = r) });
    expect(stop).toMatch(/budget/);
    expect(c.judged).toBeGreaterThan(0);
    expect(c.judged).toBeLessThan(40);
    const verdicts = await readCommittedRows(new LocalObjectStore(out), 'verdicts');
    expect(verdicts).toHaveLength(c.judged);
    const tokens = verdicts.reduce((s, v) => s + Number(v.tokens_in) * price.input_per_mtok + Number(v.tokens_out) * price.output_per_mtok, 0) / 1e6;
    const cost = verdicts.reduce((s, v) => s + Number(v.cost_usd), 0);
    expect(cost).toBeCloseTo(tokens * 0.25, 9);
    expect(c.cost_usd).toBeCloseTo(cost, 9);
    expect(c.cost_usd).toBeGreaterThanOrEqual(0.05);
  }, LONG_TEST_MS);
});
