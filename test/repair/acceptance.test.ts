/**
 * Acceptance (issue 15): a simulated generator of known fix / regression rates per condition,
 * 2,000 records judged by a simulated jury and retried through the real model layer (gateway,
 * prompts, extraction, comparison: the functions the repair step runs). The observed fix and
 * regression rates of each condition must fall inside the 95 % Wilson interval around the
 * analytic rate, and the corpus accuracy under the gate inside its 95 % interval (normal: it is
 * a sum of two binomials given which records were flagged), Bonferroni-corrected over the six
 * intervals. Seeds were fixed before the first run and are not to be changed to make it pass.
 */
import { describe, expect, it } from 'vitest';
import type { RepairRow } from '../../schemas/repair.js';
import type { TraceRecord } from '../../schemas/trace.js';
import { openRuntime } from '../../src/compose/runtime.js';
import { parseConfig } from '../../src/config/load.js';
import { deriveRows } from '../../src/derive/rows.js';
import { judgeRecord } from '../../src/jury/judge.js';
import { repairRecord } from '../../src/pipeline/steps/repair.js';
import { prepareRecord } from '../../src/pipeline/steps/segment.js';
import { buildGoldIndex, createSimProvider, parseProfile } from '../../src/sim/index.js';
import { createRng } from '../../src/util/prng.js';

const N = 2000;
const SEED = 'repair-acceptance-1'; // fixed before any result was seen
const RATES = { steps: { fix_rate: 0.35, regress_rate: 0.08 }, full: { fix_rate: 0.5, regress_rate: 0.03 } } as const;

/** Records whose last step states the answer; about 45 % are wrong (the reference differs) and carry gold errors. */
function records(): TraceRecord[] {
  const rng = createRng(['repair-records', SEED]);
  return Array.from({ length: N }, (_, i) => {
    const wrong = rng.chance(0.45);
    const k = rng.int(4, 9);
    const answer = rng.int(0, 999);
    const reference = wrong ? (answer + rng.int(1, 50)) % 1000 : answer;
    const steps = Array.from({ length: k - 1 }, (_, s) => `Step ${s + 1} of problem ${i}: ${rng.int(2, 99)} times ${rng.int(2, 99)} gives the next quantity.`);
    steps.push(`So the result follows.\nANSWER: ${answer}`);
    const error_steps = wrong ? [rng.int(1, k)] : rng.chance(0.1) ? [rng.int(1, k)] : [];
    return { id: `r${i}`, problem: `Problem ${i}: compute the quantity.`, steps, meta: {}, gold: { error_steps }, reference_answer: String(reference) };
  });
}

/** Wilson score interval for k of n at two-sided level z. */
function wilson(k: number, n: number, z: number): [number, number] {
  const p = k / n;
  const d = 1 + (z * z) / n;
  const c = (p + (z * z) / (2 * n)) / d;
  const h = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / d;
  return [c - h, c + h];
}

/** Standard normal quantile in the tails (p < 0.02425 or p > 0.97575), Acklam's rational approximation (|error| < 1.2e-9). */
function normalQuantile(p: number): number {
  if (p > 0.02425 && p < 0.97575) throw new Error('tail formula only');
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const q = Math.min(p, 1 - p);
  const t = Math.sqrt(-2 * Math.log(q));
  const x = (((((c[0]! * t + c[1]!) * t + c[2]!) * t + c[3]!) * t + c[4]!) * t + c[5]!) / ((((d[0]! * t + d[1]!) * t + d[2]!) * t + d[3]!) * t + 1);
  return p < 0.5 ? x : -x;
}

describe('simulated generator of known rates over 2,000 records', () => {
  it('fix / regression rates and corpus accuracy per condition fall inside their Bonferroni-corrected 95 % intervals', async () => {
    const recs = records();
    const profile = parseProfile({ seed: 20261203, models: { m: { generator: RATES, reasoning_words: 0 } } });
    const provider = createSimProvider({ profile, gold: buildGoldIndex(recs), latency: 'instant' });
    const config = parseConfig({
      endpoints: { sim: { kind: 'simulator' } },
      jurors: [{ id: 'j1', endpoint: 'sim', model: 'm' }, { id: 'j2', endpoint: 'sim', model: 'm' }],
      mode: 'union',
      cache: { enabled: false },
      repair: { generator: { id: 'gen', endpoint: 'sim', model: 'm', temperature: 0.7 } },
    });
    const runtime = await openRuntime({ config, auditLogPath: null, providerFor: () => provider });
    const rows: RepairRow[] = [];
    const flagged = new Set<string>();
    try {
      for (let at = 0; at < recs.length; at += 50) {
        await Promise.all(
          recs.slice(at, at + 50).map(async (rec) => {
            const p = prepareRecord(rec, config);
            if (!p.ok) throw new Error(p.error);
            const v = await judgeRecord(runtime.jury, p.input);
            const derived = deriveRows(v, { source: 'file', unit: 'u', offset: 0 }, {}, config);
            const got = await repairRecord(runtime.jury, config.repair!, rec, p.input, v.defects, derived);
            if (got.length) flagged.add(rec.id);
            rows.push(...got);
          }),
        );
      }
      expect(runtime.gateway.ledger.summary().by_phase.repair?.calls).toBe(rows.length);
    } finally {
      await runtime.close();
    }

    const right = new Map(recs.map((r) => [r.id, r.steps!.at(-1)!.endsWith(`ANSWER: ${r.reference_answer}`)]));
    // Every record the gate passed by keeps its answer; the flagged ones have one row per condition.
    expect(flagged.size).toBeGreaterThan(600);
    expect(flagged.size).toBeLessThan(N);
    expect(rows).toHaveLength(2 * flagged.size);
    for (const r of rows) {
      expect(r.error).toBeNull();
      expect(r.answer_source).toBe('marker');
      expect(r.original_correct).toBe(right.get(r.record_id));
      expect(r.gate).toBe('any_defect');
    }

    const alpha = 0.05 / 6; // 2 conditions x (fix, regression, corpus accuracy)
    const z = normalQuantile(1 - alpha / 2);
    const unflaggedRight = recs.filter((r) => !flagged.has(r.id) && right.get(r.id)).length;
    for (const cond of ['steps', 'full'] as const) {
      const mine = rows.filter((r) => r.condition === cond);
      const wasWrong = mine.filter((r) => !r.original_correct);
      const wasRight = mine.filter((r) => r.original_correct);
      const fixed = wasWrong.filter((r) => r.correct).length;
      const regressed = wasRight.filter((r) => !r.correct).length;
      const [fl, fh] = wilson(fixed, wasWrong.length, z);
      const [rl, rh] = wilson(regressed, wasRight.length, z);
      expect(RATES[cond].fix_rate, `${cond} fix ${fixed}/${wasWrong.length}`).toBeGreaterThanOrEqual(fl);
      expect(RATES[cond].fix_rate, `${cond} fix ${fixed}/${wasWrong.length}`).toBeLessThanOrEqual(fh);
      expect(RATES[cond].regress_rate, `${cond} regression ${regressed}/${wasRight.length}`).toBeGreaterThanOrEqual(rl);
      expect(RATES[cond].regress_rate, `${cond} regression ${regressed}/${wasRight.length}`).toBeLessThanOrEqual(rh);
      // Corpus accuracy under the any-defect gate: unflagged records keep their answer.
      const observed = (unflaggedRight + mine.filter((r) => r.correct).length) / N;
      const { fix_rate: f, regress_rate: g } = RATES[cond];
      const expected = (unflaggedRight + wasRight.length * (1 - g) + wasWrong.length * f) / N;
      const sd = Math.sqrt(wasRight.length * g * (1 - g) + wasWrong.length * f * (1 - f)) / N;
      console.info(`repair acceptance ${cond}: flagged ${mine.length}/${N}, fixed ${fixed}/${wasWrong.length} (rate ${RATES[cond].fix_rate}, Wilson [${fl.toFixed(3)}, ${fh.toFixed(3)}]), regressed ${regressed}/${wasRight.length} (rate ${RATES[cond].regress_rate}, Wilson [${rl.toFixed(3)}, ${rh.toFixed(3)}]), corpus accuracy ${observed.toFixed(4)} vs analytic ${expected.toFixed(4)} +- ${(z * sd).toFixed(4)}, z ${z.toFixed(3)}`);
      expect(Math.abs(observed - expected), `${cond} corpus accuracy ${observed} vs ${expected}`).toBeLessThanOrEqual(z * sd);
    }
  }, 600_000);
});
