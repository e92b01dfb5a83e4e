import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { estimate } from '../../src/cli/estimate.js';
import { runJob, type RunJobOptions } from '../../src/api/run-job.js';
import type { JuryMode } from '../../schemas/verdict.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { fastSimConfig, tempDir, writeJsonl } from '../helpers/run-setup.js';
import { LONG_TEST_MS } from '../helpers/progress.js';

// The simulator reports usage as ceil(characters / 4) of what it was sent and what it wrote
// (src/sim/engine.ts). The estimate counts the prompts it builds itself the same way, so Phase 1
// prompt tokens are a check that the dry run builds the prompts a run sends; what it must
// predict are reply sizes, the consolidator's panel and deliberation turns, which it takes from
// the audit log of a pilot run on *other* records (--calibrate), never from the run it is
// compared with.

async function actual(config: string, input: string, out: string, auditLog?: string) {
  const opts: RunJobOptions = { config, input, out, formats: ['parquet'], concurrency: 8, maxRecords: 100, maxChars: 64 * 1024 * 1024, resume: true, cache: false, log: { format: 'text', debug: false }, ...(auditLog ? { auditLog } : {}) };
  const c = await runJob(opts, { signal: new AbortController().signal, onTotal: () => undefined, onProgress: () => undefined });
  return c.tokens_in + c.tokens_out;
}

const moderator = { moderator: { id: 'moderator', endpoint: 'sim', model: 'sim-moderator' } };

describe('estimate (dry run)', () => {
  const dir = tempDir('estimate');
  const pilot = writeJsonl(join(dir, 'pilot.jsonl'), syntheticRecords(20, { seed: 11, prefix: 'pilot' }));
  const target = writeJsonl(join(dir, 'target.jsonl'), syntheticRecords(40, { seed: 12, prefix: 'target' }));

  // Deliberation's cost per record follows how long each debate runs (3 to 12 turns here), which
  // a 20-record pilot pins down only to about ±15 %: measured 12.6 % off (docs/benchmarks.md).
  it.each<[JuryMode, number]>([['single', 0.1], ['majority', 0.1], ['consolidation', 0.1], ['deliberation', 0.2]])('%s: calibrated on a pilot, the projection for other records is within %d of what a run on them uses', async (mode, bound) => {
    const config = fastSimConfig(join(dir), { mode, ...moderator });
    const audit = join(dir, `pilot-${mode}.jsonl`);
    await actual(config, pilot, join(dir, `pilot-${mode}`), audit);
    const used = await actual(config, target, join(dir, `target-${mode}`));
    // Whole target built (sample = 40) and a quarter of it (sample = 10, scaled up).
    for (const sample of ['40', '10']) {
      const e = await estimate({ config, input: target, sample, seed: '1', calibrate: audit });
      const m = e.modes.find((x) => x.mode === mode)!;
      expect(e.records).toBe(40);
      const projected = m.tokens_in + m.tokens_out;
      expect(Math.abs(projected - used) / used, `${mode} sample ${sample}: projected ${projected}, used ${used}`).toBeLessThanOrEqual(bound);
    }
  }, LONG_TEST_MS);

  it('calls no model: a config whose endpoint does not exist still estimates, and prices give dollars', async () => {
    const sub = tempDir('estimate-offline');
    const config = fastSimConfig(sub, {
      endpoints: { remote: { kind: 'openai', base_url: 'http://127.0.0.1:9/v1' } },
      jurors: [{ id: 'a', endpoint: 'remote', model: 'm' }, { id: 'b', endpoint: 'remote', model: 'm' }],
      consolidator: { id: 'c', endpoint: 'remote', model: 'm' },
      prices: { m: { input_per_mtok: 1, output_per_mtok: 2 } },
    });
    const e = await estimate({ config, input: target, sample: '5', seed: '1' });
    expect(e.profile.from).toBe('defaults');
    expect(e.modes.map((m) => m.mode)).toEqual(['single', 'union', 'majority', 'consolidation']);
    const single = e.modes[0]!;
    expect(single.calls).toBe(40);
    expect(single.cost_usd).toBeCloseTo((single.tokens_in * 1 + single.tokens_out * 2) / 1e6, 9);
    // Two jurors: union calls Phase 1 twice per record, consolidation once more.
    expect(e.modes[1]!.calls).toBe(80);
    expect(e.modes[3]!.calls).toBe(120);
  }, LONG_TEST_MS);
});
