import { IMPACTS } from '../../schemas/defect.js';
import type { DefectRow, VerdictRow } from '../../schemas/outputs.js';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { ShardCommitter } from '../../src/pipeline/commit/shard-commit.js';
import { createRng } from '../../src/util/prng.js';

/** A few leaves from two categories, so defects on one step often share a category. */
const LEAVES = [
  ['computation', 'computation.sign'],
  ['computation', 'computation.numerical_calculation'],
  ['computation', 'computation.misused_value'],
  ['logic', 'logic.false_math_fact'],
  ['logic', 'logic.reversed_inequality'],
] as const;

/**
 * A second "run" for the report: hand-made shards whose defects overlap on steps (within and
 * across categories, at different severities), with some unassigned defects and some records
 * without a verdict: the cases a simulated jury rarely produces.
 */
export async function writeOverlapRun(out: string, generator: string, n = 60): Promise<void> {
  const verdicts: VerdictRow[] = [];
  const defects: DefectRow[] = [];
  for (let i = 0; i < n; i++) {
    const rng = createRng(['overlap-fixture', i]);
    const id = `fx-${String(i).padStart(3, '0')}`;
    const nSteps = 8;
    const failed = i % 13 === 5;
    const k = failed ? 0 : rng.int(0, 4);
    for (let d = 0; d < k; d++) {
      const first = rng.int(1, 4);
      const refs = [...new Set([first, first + rng.int(0, 2), rng.int(1, 3)])].sort((a, b) => a - b);
      const leaf = rng.chance(0.15) ? null : LEAVES[rng.int(0, LEAVES.length - 1)]!;
      defects.push({
        record_id: id, defect_id: `${id}#d${d}`, statement_refs: refs, impact: IMPACTS[rng.int(0, 3)]!, what_went_wrong: 'w', evidence: 'e', correct_value: null, vote_count: null, voters: [],
        category_id: leaf ? leaf[0] : null, leaf_id: leaf ? leaf[1] : null, taxonomy_status: leaf ? 'assigned' : 'unassigned:omitted',
      });
    }
    verdicts.push({
      record_id: id, mode: 'consolidation', jurors_total: 3, jurors_ok: failed ? 1 : 3, phase1_seats: null, escalations: null, n_steps: nSteps, n_defects: k, max_impact: null, confidence: 1, n_dissent: 0,
      termination_reason: 'not_applicable', rounds: 0, degraded: failed, degraded_reason: null, error: failed ? 'too few jurors succeeded' : null,
      tokens_in: 0, tokens_out: 0, cost_usd: 0, latency_ms: 0, prompt_hash: 'p', config_hash: 'c', source: 'file', source_unit: 'fixture', source_offset: i,
      meta: JSON.stringify({ generator, final_answer_correct: rng.chance(0.5) }),
    });
  }
  await new ShardCommitter(new LocalObjectStore(out)).commit({ source: 'file', first: 'fx0', last: 'fx1', tables: { verdicts, defects } });
}
