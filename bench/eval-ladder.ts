import { join } from 'node:path';
import { loadBenchmark } from '../src/eval/adapters/index.js';
import { MISSING_DATA_MESSAGE, sharedDataDir } from '../src/eval/data.js';
import { analyticTable, costMarkdown, knockoutTable, stepTable } from '../src/eval/report.js';
import { sampleRecords } from '../src/eval/run.js';
import { simulatedLadder } from '../src/cli/sim-ladder.js';
import { fmt } from './common.js';

/**
 * The aggregation ladder with simulated jurors of known rates (src/cli/sim-ladder.ts) over a
 * seeded sample of ProcessBench records, next to what the rates predict (src/eval/analytic.ts).
 * In-process instant jurors, so 1,000 records take seconds.
 */
export async function benchEvalLadder(n = 1000): Promise<string> {
  const dir = sharedDataDir();
  if (!dir) return `skipped: ${MISSING_DATA_MESSAGE}`;
  const all = loadBenchmark('processbench', join(dir, 'processbench'));
  const records = sampleRecords(all.records, n, 0);
  const t0 = performance.now();
  const { report, judgeMs } = await simulatedLadder({ ...all, records });
  const totalMs = performance.now() - t0;
  const scores = new Map(report.systems.map((s) => [s.system, s]));
  const ladder = report.systems.filter((s) => s.kind !== 'knockout');
  const misses = report.analytic.flatMap((a) => ['recall', 'specificity', 'balanced_f1'].filter((k) => a.within_ci[k] === false).map((k) => `${a.system} ${k}`));
  return [
    `${n} ProcessBench records (seeded sample, seed 0; ${report.steps.erroneous} gold-erroneous and ${report.steps.correct} correct steps scored, ${report.steps.unlabelled} unlabelled steps after the first error left out), ` +
      `3 simulated jurors + consolidation, severity minor+, 95 % intervals from ${report.options.resamples.toLocaleString('en-US')} record-level resamples. ` +
      `Judging took ${fmt(judgeMs / 1000, 1)} s (${(4 * n).toLocaleString('en-US')} calls), everything ${fmt(totalMs / 1000, 1)} s.`,
    '',
    stepTable(ladder),
    '',
    'Predicted by the profile rates vs. observed (✗: prediction outside the 95 % interval):',
    '',
    analyticTable(report.analytic, scores),
    '',
    `Predictions outside their 95 % interval (recall, specificity, Balanced F1; 18 checks): ${misses.length ? misses.join('; ') : 'none'}.`,
    '',
    'Knockout (Phase 1 fixed, consolidation re-run):',
    '',
    knockoutTable(report.knockout, scores),
    '',
    `Cost (ratios to ${report.cost_baseline}; simulated token counts, illustrative prices):`,
    '',
    costMarkdown(report.cost, report.cost_baseline),
  ].join('\n');
}
