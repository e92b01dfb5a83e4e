import { join } from 'node:path';
import { loadBenchmark } from '../src/eval/adapters/index.js';
import { MISSING_DATA_MESSAGE, sharedDataDir } from '../src/eval/data.js';
import { costMarkdown, passDeltaTable, stepTable } from '../src/eval/report.js';
import { sampleRecords } from '../src/eval/run.js';
import { PASS_RATES, simulatedPasses } from '../src/cli/sim-ladder.js';
import { fmt } from './common.js';

/**
 * The verification passes on the simulated ladder (src/cli/sim-ladder.ts): the same 1,000
 * ProcessBench records as eval-ladder, judged with consolidation + removal pass + evidence
 * arbiter; the ladder reads back the consensus before the passes and each pass alone from the
 * verdicts, and pairs every rung with that consensus record by record.
 */
export async function benchPasses(n = 1000): Promise<string> {
  const dir = sharedDataDir();
  if (!dir) return `skipped: ${MISSING_DATA_MESSAGE}`;
  const all = loadBenchmark('processbench', join(dir, 'processbench'));
  const records = sampleRecords(all.records, n, 0);
  const out: string[] = [`Pass rates of the profile: removal ${JSON.stringify(PASS_RATES.removal)}, arbiter ${JSON.stringify(PASS_RATES.arbiter)}.`];
  for (const consolidator of ['moderator-careful', 'moderator-lenient']) {
    const { report, judgeMs, verdicts } = await simulatedPasses({ ...all, records }, { consolidator });
    const dropped = verdicts.reduce((a, v) => a + (v.dropped_negatives?.length ?? 0), 0);
    const ruled = verdicts.reduce((a, v) => a + (v.negative_adjudications?.length ?? 0), 0);
    const calls = report.ledger?.total.calls ?? 0;
    out.push(
      '',
      `#### consolidator ${consolidator}`,
      '',
      `${n} records (seed 0), ${report.steps.erroneous} gold-erroneous and ${report.steps.correct} correct steps scored, severity minor+, ` +
        `${report.options.resamples.toLocaleString('en-US')} paired record-level resamples. Judging took ${fmt(judgeMs / 1000, 1)} s (${calls.toLocaleString('en-US')} calls); ` +
        `the removal pass dropped ${dropped} defects, the arbiter ruled on ${ruled} contested findings.`,
      '',
      stepTable(report.systems.filter((s) => s.kind !== 'knockout')),
      '',
      'Against the consensus before the passes (points, paired 95 % intervals):',
      '',
      passDeltaTable(report.passes ?? []),
      '',
      costMarkdown(report.cost.filter((c) => !c.system.startsWith('solo ') || c.system === 'solo strong'), report.cost_baseline),
    );
  }
  return out.join('\n');
}
