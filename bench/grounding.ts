import { join } from 'node:path';
import type { TraceRecord } from '../schemas/trace.js';
import type { Verdict } from '../schemas/verdict.js';
import { GROUNDING_RUNGS, simulatedGrounding } from '../src/cli/sim-grounding.js';
import { loadBenchmark } from '../src/eval/adapters/index.js';
import { MISSING_DATA_MESSAGE, sharedDataDir } from '../src/eval/data.js';
import { pairedTable, passDeltaTable, stepTable } from '../src/eval/report.js';
import { sampleRecords } from '../src/eval/run.js';
import { groundDefect, quotesOf, stepTokens } from '../src/jury/grounding/index.js';
import { isInventedQuote } from '../src/sim/index.js';
import { fmt } from './common.js';

type Kind = 'invented' | 'genuine' | 'mixed';
/** Invented: every quote of the evidence is one the simulator made up; genuine: none is. */
function kindOf(evidence: string): Kind {
  const q = quotesOf(evidence);
  const made = q.filter((x) => isInventedQuote(x.text)).length;
  return made === 0 ? 'genuine' : made === q.length ? 'invented' : 'mixed';
}

const share = (removed: number, total: number): string => `${removed} of ${total} (${total ? fmt((100 * removed) / total, 1) : '–'} %)`;

/** Consensus defects of the grounding rung by kind: how many grounding dropped and relocated. */
function consensusCounts(verdicts: readonly Verdict[]): Record<Kind, { total: number; dropped: number; relocated: number }> {
  const out = { invented: { total: 0, dropped: 0, relocated: 0 }, genuine: { total: 0, dropped: 0, relocated: 0 }, mixed: { total: 0, dropped: 0, relocated: 0 } };
  for (const v of verdicts)
    for (const c of v.grounding?.checks ?? []) {
      const k = out[kindOf(c.evidence)];
      k.total++;
      if (c.outcome === 'dropped') k.dropped++;
      if (c.status === 'relocated') k.relocated++;
    }
  return out;
}

/** Each juror's own Phase 1 findings through the same deterministic check. */
function phase1Counts(verdicts: readonly Verdict[], records: ReadonlyMap<string, TraceRecord>): Record<'invented' | 'genuine', { total: number; ungrounded: number }> {
  const out = { invented: { total: 0, ungrounded: 0 }, genuine: { total: 0, ungrounded: 0 } };
  const opts = { maxEditRatio: 0.2, minFuzzyTokens: 4 };
  for (const v of verdicts) {
    const steps = stepTokens(records.get(v.record_id)?.steps ?? []);
    for (const j of v.phase1_judgements)
      for (const d of j.defects) {
        const k = kindOf(d.evidence) === 'invented' ? out.invented : out.genuine;
        k.total++;
        if (groundDefect(d, steps, opts).status === 'ungrounded') k.ungrounded++;
      }
  }
  return out;
}

/**
 * Deterministic grounding against jurors that invent 20 % of their findings (issue 17
 * acceptance): the same 1,000 ProcessBench records as the passes bench, judged once per rung.
 */
export async function benchGrounding(n = 1000): Promise<string> {
  const dir = sharedDataDir();
  if (!dir) return `skipped: ${MISSING_DATA_MESSAGE}`;
  const all = loadBenchmark('processbench', join(dir, 'processbench'));
  const records = sampleRecords(all.records, n, 0);
  const g = await simulatedGrounding({ ...all, records }, { inventRate: 0.2 });
  const grounding = g.rungs.find((r) => r.name === GROUNDING_RUNGS[1]!.name)!;
  const c = consensusCounts(grounding.verdicts);
  const p = phase1Counts(grounding.verdicts, new Map(records.map((r) => [r.id, r])));
  return [
    `${n} records (seed 0), jurors of the ladder with invent_rate 0.2, consolidator moderator-careful, grounding policy drop (max_edit_ratio 0.2, min_fuzzy_tokens 4).`,
    '',
    '| findings | invented: removed | genuine: removed |',
    '| --- | --- | --- |',
    `| Phase 1, each juror's own (deterministic check) | ${share(p.invented.ungrounded, p.invented.total)} | ${share(p.genuine.ungrounded, p.genuine.total)} |`,
    `| consensus defects (dropped by grounding) | ${share(c.invented.dropped, c.invented.total)} | ${share(c.genuine.dropped, c.genuine.total)} |`,
    '',
    `Consensus defects whose evidence mixes invented and genuine quotes (an invented finding merged with a real one on the same step): ${c.mixed.total}, ${c.mixed.dropped} dropped. Relocated (refs corrected): ${c.genuine.relocated + c.invented.relocated + c.mixed.relocated}. Voter corrections: ${grounding.verdicts.reduce((a, v) => a + (v.grounding?.voter_corrections.length ?? 0), 0)}.`,
    '',
    `Judging: ${g.rungs.map((r) => `${r.name} ${fmt(r.judgeMs / 1000, 1)} s, ${r.calls.toLocaleString('en-US')} calls`).join('; ')}.`,
    '',
    stepTable(g.scores),
    '',
    'Against `jury, no passes` (points, paired 95 % intervals, record-level bootstrap):',
    '',
    passDeltaTable(g.deltas),
    '',
    'Balanced F1 of every two rungs (paired):',
    '',
    pairedTable(g.paired),
  ].join('\n');
}
