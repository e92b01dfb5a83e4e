import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBenchmark } from '../../src/eval/adapters/index.js';
import { MISSING_DATA_MESSAGE, sharedDataDir } from '../../src/eval/data.js';
import { sampleRecords } from '../../src/eval/run.js';
import { simulatedLadder } from '../../src/cli/sim-ladder.js';

/**
 * Acceptance: the aggregation ladder with simulated jurors of known rates over 1,000 ProcessBench
 * records (seeded sample) shows the paper's pattern, and every rung's recall, specificity and
 * Balanced F1 agree with what the profile predicts analytically (src/eval/analytic.ts).
 *
 * Gold-positive steps, for the simulator and for scoring alike: the earliest error only; steps
 * before it are correct; steps after it are unlabelled (left out of scoring; the simulator treats
 * them as clean, which cannot matter since they are not scored).
 *
 * Agreement is checked against 99 % intervals: 18 comparisons at 95 % coverage would be expected
 * to miss about one by chance, so 95 % would make the test fail on luck rather than on a fault.
 * The 95 % table (docs/benchmarks.md) is produced by `npm run bench -- eval-ladder`.
 */
const dir = sharedDataDir();

describe.skipIf(!dir)(`simulated aggregation ladder on ProcessBench${dir ? '' : ` (skipped: ${MISSING_DATA_MESSAGE})`}`, () => {
  it('majority collapses recall, union raises it, consolidation trades recall for precision; all as predicted', async () => {
    const all = loadBenchmark('processbench', join(dir!, 'processbench'));
    const records = sampleRecords(all.records, 1000, 0);
    const { report } = await simulatedLadder({ ...all, records }, { resamples: 4000, score: { level: 0.99 } });
    const s = new Map(report.systems.map((x) => [x.system, x.step]));
    const rec = (n: string) => s.get(n)!.recall.value!;
    const prec = (n: string) => s.get(n)!.precision.value!;
    const solos = ['solo strong', 'solo mid', 'solo weak'];
    const bestSoloRecall = Math.max(...solos.map(rec));

    expect(report.records.scored).toBe(1000);
    expect(report.steps.erroneous).toBeGreaterThan(500);
    // The pattern of §4.7 / App. H.
    expect(rec('union')).toBeGreaterThan(bestSoloRecall + 0.1);
    expect(rec('majority')).toBeLessThan(bestSoloRecall);
    expect(rec('majority')).toBeLessThan(rec('union') - 0.2);
    expect(prec('majority')).toBeGreaterThan(Math.max(prec('union'), prec('jury (consolidation)'), ...solos.map(prec)));
    expect(rec('jury (consolidation)')).toBeLessThan(rec('union'));
    expect(prec('jury (consolidation)')).toBeGreaterThan(prec('union') + 0.15);
    expect(s.get('jury (consolidation)')!.balanced_f1.value!).toBeGreaterThan(Math.max(...solos.map((n) => s.get(n)!.balanced_f1.value!)));

    // Observed vs. analytic, within the 99 % record-level bootstrap interval.
    expect(report.analytic.map((a) => a.system).sort()).toEqual(['jury (consolidation)', 'majority', 'solo mid', 'solo strong', 'solo weak', 'union']);
    for (const a of report.analytic) {
      for (const k of ['recall', 'specificity', 'balanced_f1'] as const) expect(a.within_ci[k], `${a.system} ${k}: predicted ${a.predicted[k]}`).toBe(true);
    }

    // Knockout drops the weakest juror; the lenient moderator lets more false alarms through.
    expect(report.knockout.map((r) => r.dropped)).toEqual([null, 'weak']);
    expect(prec('consolidation by moderator-lenient')).toBeLessThan(prec('consolidation by moderator-careful'));
    expect(s.get('consolidation by moderator-careful')!.balanced_f1.value).toBe(s.get('jury (consolidation)')!.balanced_f1.value); // same seat, same Phase 1: same verdicts
    const cost = new Map(report.cost.map((c) => [c.system, c]));
    expect(cost.get('jury (consolidation)')!.ratio!.calls).toBe(4);
    expect(cost.get('solo strong')!.calls).toBe(1000);
  });
});
