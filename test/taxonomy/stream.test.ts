import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openFileSource } from '../../connectors/file/index.js';
import type { JuryConfigInput } from '../../schemas/config.js';
import { parseConfig } from '../../src/config/load.js';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { ShardCommitter } from '../../src/pipeline/commit/shard-commit.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { runStage } from '../../src/pipeline/stage.js';
import { intakeSettings, judgingSteps } from '../../src/pipeline/steps/index.js';
import { openRuntime } from '../../src/compose/runtime.js';
import { parseProfile } from '../../src/sim/profile.js';
import { createSimProvider } from '../../src/sim/provider.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { consolidationTask, phase1Task } from '../../src/sim/tasks.js';
import { createTaxonomyTasks, type TaxonomySimOptions } from '../../src/sim/taxonomy-tasks.js';
import { createTaxonomyEnricher } from '../../src/taxonomy/enrich.js';
import { loadTaxonomy, TaxonomyIndex } from '../../src/taxonomy/schema.js';
import { tempDir, writeJsonl } from '../helpers/run-setup.js';

const index = new TaxonomyIndex(loadTaxonomy());
const records = syntheticRecords(100, { seed: 12 });

const configInput = (): JuryConfigInput => ({
  endpoints: { sim: { base_url: 'http://sim.invalid/v1', max_concurrency: 32, backoff_base_ms: 1, backoff_max_ms: 5 } },
  jurors: [
    { id: 'jury-0', endpoint: 'sim', model: 'sim-juror-a' },
    { id: 'jury-1', endpoint: 'sim', model: 'sim-juror-b' },
  ],
  consolidator: { id: 'consolidator', endpoint: 'sim', model: 'sim-consolidator' },
  cache: { enabled: false, dir: '/nonexistent' },
  // Every seat priced: one unpriced seat makes a record's cost_usd null (unknown), see test/cli/unpriced-cost.test.ts.
  prices: { 'sim-juror-a': { input_per_mtok: 1, output_per_mtok: 2 }, 'sim-juror-b': { input_per_mtok: 1, output_per_mtok: 2 }, 'sim-consolidator': { input_per_mtok: 3, output_per_mtok: 4 } },
  taxonomy: { batch_size: 4, max_rounds: 3 },
});

/** Runs the stage in-process over `records`; `taxonomy` = simulator slips, or null for no assignment. */
async function stageRun(taxonomy: Partial<TaxonomySimOptions> | null) {
  const dir = tempDir('tax-stream');
  const input = writeJsonl(join(dir, 'in.jsonl'), records);
  const config = parseConfig(configInput());
  const profile = parseProfile({ seed: 2, models: { default: { latency_ms: 0, recall: 0.7, false_positive_rate: 0.08 } } });
  const tasks = [consolidationTask, phase1Task, ...createTaxonomyTasks(taxonomy ?? {})];
  const runtime = await openRuntime({ config, providerFor: () => createSimProvider({ profile, tasks }) });
  const store = new LocalObjectStore(join(dir, 'out'));
  const source = await openFileSource(input);
  try {
    const enrich = taxonomy ? createTaxonomyEnricher({ config, gateway: runtime.gateway, prompts: runtime.jury.prompts }).enrich : undefined;
    await runStage({ source, intake: intakeSettings(config), steps: judgingSteps({ config, jury: runtime.jury, enrich }), committer: new ShardCommitter(store), concurrency: 8, range: { maxRecords: 25, maxChars: 1 << 30, sequentialUnits: true } });
    return {
      defects: await readCommittedRows(store, 'defects'),
      verdicts: await readCommittedRows(store, 'verdicts'),
      ledger: runtime.gateway.ledger.summary(),
    };
  } finally {
    await source.close();
    await runtime.close();
  }
}

describe('taxonomy assignment inside the streaming stage', () => {
  it('with a sloppy assigner, every stored defect has a valid leaf of its category or unassigned:<reason>, never an invalid id', async () => {
    // 35% invalid ids and 15% omissions per answer: retries fix most, some stay unassigned.
    const r = await stageRun({ invalidRate: 0.35, omitRate: 0.15 });
    expect(r.defects.length).toBeGreaterThan(30);
    let assigned = 0;
    const reasons = new Set<string>();
    for (const d of r.defects) {
      if (d.taxonomy_status === 'assigned') {
        assigned++;
        const entry = index.leaf(String(d.leaf_id));
        expect(entry, `leaf ${String(d.leaf_id)}`).toBeDefined();
        expect(d.category_id).toBe(entry!.category.id);
      } else {
        expect(String(d.taxonomy_status)).toMatch(/^unassigned:(invalid_leaf|omitted|call_failed)$/);
        reasons.add(String(d.taxonomy_status));
        expect(d.leaf_id).toBeNull();
        expect(d.category_id).toBeNull();
      }
    }
    expect(assigned).toBeGreaterThan(r.defects.length * 0.6);
    expect(assigned).toBeLessThan(r.defects.length); // the slips really happened
    expect(reasons.size).toBeGreaterThan(0);
  });

  it('the assignment calls are ledgered as the taxonomy phase and added to the verdict rows', async () => {
    const off = await stageRun(null);
    const on = await stageRun({ invalidRate: 0, omitRate: 0 });
    expect(off.defects.every((d) => d.leaf_id === null && d.taxonomy_status === null)).toBe(true);
    expect(on.defects.every((d) => d.taxonomy_status === 'assigned')).toBe(true);
    // Same jury, same defects: the only difference is the assignment.
    expect(on.defects.map((d) => d.defect_id)).toEqual(off.defects.map((d) => d.defect_id));
    const tax = on.ledger.by_phase.taxonomy!;
    const recordsWithDefects = new Set(on.defects.map((d) => d.record_id)).size;
    expect(tax.calls).toBeGreaterThanOrEqual(recordsWithDefects);
    const sum = (rows: typeof on.verdicts, k: string) => rows.reduce((a, v) => a + Number(v[k]), 0);
    expect(sum(on.verdicts, 'tokens_in') - sum(off.verdicts, 'tokens_in')).toBe(tax.tokens_in);
    expect(sum(on.verdicts, 'tokens_out') - sum(off.verdicts, 'tokens_out')).toBe(tax.tokens_out);
    expect(sum(on.verdicts, 'cost_usd') - sum(off.verdicts, 'cost_usd')).toBeCloseTo(tax.cost_usd, 9);
    expect(tax.cost_usd).toBeGreaterThan(0);
    expect(on.ledger.by_phase.phase1!.calls).toBe(off.ledger.by_phase.phase1!.calls);
  });
});
