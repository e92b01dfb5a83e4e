/**
 * The analytic cascade model (src/eval/cascade-analytic.ts) against a simulated run (issue 16.4):
 * its predicted escalation rate, Phase 1 calls × single and step recall / false-positive rate
 * of cascade + union fall inside the 95 % record-level bootstrap intervals observed on 300
 * ProcessBench records. Sample seed, profile seed and sizes were fixed before the first run.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { JuryConfigInput } from '../../schemas/config.js';
import type { Verdict } from '../../schemas/verdict.js';
import { IMPACT_RANK } from '../../schemas/defect.js';
import { parseConfig } from '../../src/config/load.js';
import { openRuntime } from '../../src/compose/runtime.js';
import { loadBenchmark } from '../../src/eval/adapters/index.js';
import { predictCascade, type AnalyticRule } from '../../src/eval/cascade-analytic.js';
import { sharedDataDir } from '../../src/eval/data.js';
import { type Aggregator, bootstrapMany, wsum } from '../../src/eval/metrics/bootstrap.js';
import { sampleRecords } from '../../src/eval/run.js';
import { judgeRecord } from '../../src/jury/judge.js';
import { prepareRecord } from '../../src/pipeline/steps/segment.js';
import { buildGoldIndex, createSimProvider, modelProfile, parseProfile, recordBlocks } from '../../src/sim/index.js';

const SEED = 16;
const N = 300;
const dir = sharedDataDir();

// Independent jurors, one step per finding, no faults: the model's assumptions.
const profile = parseProfile({
  seed: SEED,
  models: {
    default: { latency_ms: 0, adjacent_rate: 0, rate_bad_ref: 0, severity_mix: { neutral: 0.1, minor: 0.2, major: 0.4, fatal: 0.3 }, fp_severity_mix: { neutral: 0.3, minor: 0.4, major: 0.25, fatal: 0.05 } },
    'sim-juror-a': { recall: 0.75, false_positive_rate: 0.03 },
    'sim-juror-b': { recall: 0.6, false_positive_rate: 0.05 },
    'sim-juror-c': { recall: 0.45, false_positive_rate: 0.08 },
  },
});
const jurors = ['a', 'b', 'c'].map((m, i) => ({ id: `jury-${i}`, endpoint: 'sim', model: `sim-juror-${m}` }));

/** Per record: escalated (0/1), Phase 1 calls, and the step confusion of the verdict against the simulator's gold. */
interface Obs {
  esc: number;
  calls: number;
  tp: number;
  pos: number;
  fp: number;
  neg: number;
}

const ratio = (num: Float64Array, den: Float64Array): Aggregator<'v'> => ({ n: num.length, keys: ['v'], compute: (w) => ({ v: wsum(num, w) / wsum(den, w) }) });

describe.skipIf(!dir)('cascade analytic model', () => {
  const all = dir ? loadBenchmark('processbench', join(dir, 'processbench')) : null;
  const records = all ? sampleRecords(all.records, N, SEED) : [];
  const gold = buildGoldIndex(records);

  for (const [start, rule] of [
    [1, 'any_finding'],
    [2, 'disagree_step'],
  ] as Array<[number, AnalyticRule]>) {
    it(`start ${start}, add all, ${rule}: predictions inside the observed 95 % intervals`, async () => {
      const config = parseConfig({
        endpoints: { sim: { kind: 'simulator', max_concurrency: 64 } },
        jurors,
        mode: 'union',
        phase1: { strategy: 'cascade', cascade: { start, add: 'all', rules: [rule] } },
        cache: { enabled: false, dir: '.cache/none' },
      } as JuryConfigInput);
      const rt = await openRuntime({ config, auditLogPath: null, providerFor: () => createSimProvider({ profile, gold, latency: 'instant' }) });
      const obs: Obs[] = [];
      const shapes: Array<{ n_steps: number; error_steps: number[] }> = [];
      try {
        for (const r of records) {
          const p = prepareRecord(r, config);
          if (!p.ok) continue;
          const b = recordBlocks(r);
          const g = gold.lookup(b.problem, b.trace)!;
          const v: Verdict = await judgeRecord(rt.jury, p.input);
          expect(v.jurors_ok).toBe(v.cascade!.seats.length);
          const flagged = new Set(v.defects.filter((d) => IMPACT_RANK[d.impact] >= IMPACT_RANK.minor).flatMap((d) => d.statement_refs));
          const errors = new Set(g.error_steps);
          let tp = 0;
          let fp = 0;
          for (let s = 1; s <= g.n_steps; s++) if (flagged.has(s)) errors.has(s) ? tp++ : fp++;
          obs.push({ esc: v.cascade!.escalations.length > 0 ? 1 : 0, calls: v.usage.filter((u) => u.phase === 'phase1').length, tp, pos: errors.size, fp, neg: g.n_steps - errors.size });
          shapes.push(g);
        }
      } finally {
        await rt.close();
      }
      expect(obs.length).toBeGreaterThan(N * 0.9);
      const col = (k: keyof Obs) => Float64Array.from(obs, (o) => o[k]);
      const ones = new Float64Array(obs.length).fill(1);
      const [esc, calls, recall, fpr] = bootstrapMany([ratio(col('esc'), ones), ratio(col('calls'), ones), ratio(col('tp'), col('pos')), ratio(col('fp'), col('neg'))], { resamples: 4000, seed: SEED }).map((x) => x.v!);
      const pred = predictCascade({ ratesOf: (m) => modelProfile(profile, m), jurors, start, rules: [rule], threshold: 'minor', records: shapes });
      const inside = (p: number, ci: { lo: number; hi: number }) => ({ p, ...ci, ok: p >= ci.lo && p <= ci.hi });
      const report = { escalation: inside(pred.escalation_rate, esc!), calls: inside(pred.calls_x_single, calls!), recall: inside(pred.recall, recall!), fpr: inside(pred.fpr, fpr!) };
      expect(report, JSON.stringify(report)).toMatchObject({ escalation: { ok: true }, calls: { ok: true }, recall: { ok: true }, fpr: { ok: true } });
    });
  }
});
