import type { Impact } from '../../schemas/defect.js';
import type { DefectRow, VerdictRow } from '../../schemas/outputs.js';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { ShardCommitter } from '../../src/pipeline/commit/shard-commit.js';
import { segmentRecord } from '../../src/segment/index.js';
import { createRng } from '../../src/util/prng.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { describeDefect } from '../../src/sim/text.js';

export const GENERATORS = ['gen-alpha', 'gen-beta', 'gen-gamma'] as const;

function verdictRow(recordId: string, offset: number, nSteps: number, nDefects: number, generator: string): VerdictRow {
  return {
    record_id: recordId, mode: 'consolidation', jurors_total: 3, jurors_ok: 3, phase1_seats: null, escalations: null, n_steps: nSteps, n_defects: nDefects, max_impact: null,
    confidence: 1, n_dissent: 0, termination_reason: 'not_applicable', rounds: 0, degraded: false, degraded_reason: null, error: null,
    tokens_in: 0, tokens_out: 0, cost_usd: 0, latency_ms: 0, prompt_hash: 'p', config_hash: 'c', source: 'file', source_unit: 'fixture', source_offset: offset,
    meta: JSON.stringify({ generator }),
  };
}

/**
 * A run output folder holding exactly `n` defects written the way the simulated jury writes
 * them (src/sim/text.ts) over synthetic traces from three generators, committed in two ranges.
 */
export async function writeDefectShards(out: string, n: number, seed = 1): Promise<void> {
  const impacts: Record<Impact, number> = { fatal: 0.3, major: 0.45, minor: 0.2, neutral: 0.05 };
  const records = syntheticRecords(Math.ceil(n / 2), { seed, cleanShare: 0 });
  const verdicts: VerdictRow[] = [];
  const defects: DefectRow[] = [];
  let left = n;
  for (const [i, rec] of records.entries()) {
    if (left === 0) break;
    const rng = createRng(['defect-fixture', seed, i]);
    const steps = segmentRecord(rec).map((s) => s.text);
    const k = Math.min(left, rng.int(1, 4));
    left -= k;
    for (let d = 0; d < k; d++) {
      const ref = rng.int(1, steps.length);
      let u = rng.next();
      const impact = (Object.keys(impacts) as Impact[]).find((x) => (u -= impacts[x]) < 0) ?? 'major';
      const t = describeDefect(rng, steps, [ref], impact, 40);
      defects.push({ record_id: rec.id, defect_id: `${rec.id}#d${d}`, statement_refs: [ref], impact, what_went_wrong: t.what_went_wrong, evidence: t.evidence, correct_value: t.correct_value ?? null, vote_count: 2, voters: ['jury-0', 'jury-1'], category_id: null, leaf_id: null, taxonomy_status: null });
    }
    verdicts.push(verdictRow(rec.id, i, steps.length, k, GENERATORS[i % 3]!));
  }
  if (left > 0) throw new Error('not enough records for the requested defects');
  const committer = new ShardCommitter(new LocalObjectStore(out));
  const half = Math.floor(verdicts.length / 2);
  for (const [first, last, vs] of [['a0', 'a1', verdicts.slice(0, half)], ['b0', 'b1', verdicts.slice(half)]] as const) {
    const ids = new Set(vs.map((v) => v.record_id));
    await committer.commit({ source: 'file', first, last, tables: { verdicts: vs, defects: defects.filter((d) => ids.has(d.record_id)) } });
  }
}
