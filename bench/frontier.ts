import { join } from 'node:path';
import PQueue from 'p-queue';
import type { JuryConfigInput } from '../schemas/config.js';
import type { TraceRecord } from '../schemas/trace.js';
import type { Verdict } from '../schemas/verdict.js';
import { parseConfig } from '../src/config/load.js';
import { openRuntime } from '../src/compose/runtime.js';
import { loadBenchmark } from '../src/eval/adapters/index.js';
import { MISSING_DATA_MESSAGE, sharedDataDir } from '../src/eval/data.js';
import { goldOf } from '../src/eval/gold.js';
import { type Aggregator, bootstrapMany } from '../src/eval/metrics/bootstrap.js';
import { recordConfusion, stepAggregator } from '../src/eval/metrics/step.js';
import { predictionFromVerdict } from '../src/eval/predictions.js';
import { sampleRecords } from '../src/eval/run.js';
import type { LabelScope } from '../src/eval/types.js';
import { judgeRecord } from '../src/jury/judge.js';
import { prepareRecord } from '../src/pipeline/steps/segment.js';
import { buildGoldIndex, createSimProvider, parseProfile, type ProfileFileInput } from '../src/sim/index.js';
import { fmt } from './common.js';

/**
 * The cost/quality frontier of Phase 1 strategies (issue 16.3): simulated jurors of known noise
 * judge ProcessBench records; for a single judge, union, majority, full consolidation and each
 * cascade variant: step Balanced F1 (severity minor+, first-error labels, no propagation, the
 * eval defaults) with a 95 % record-level bootstrap interval, and tokens × single. Repeated with
 * the jurors' misses correlated (`miss_correlation` ρ, src/sim/profile.ts).
 */

/** Reply sizes of a medium-effort reasoning model (as the deliberation benchmark's profile). Also the batch-cost benchmark's jurors. */
export function frontierProfile(rho: number): ProfileFileInput {
  return {
    seed: 797,
    models: {
      default: { latency_ms: 0, recall: 0.6, false_positive_rate: 0.04, fp_severity_mix: { neutral: 0.15, minor: 0.5, major: 0.3, fatal: 0.05 }, words_per_defect: 45, reasoning_words: 350, miss_correlation: rho },
      'sim-juror-a': { recall: 0.75, false_positive_rate: 0.03, words_per_defect: 55 },
      'sim-juror-b': { recall: 0.6, false_positive_rate: 0.05 },
      'sim-juror-c': { recall: 0.45, false_positive_rate: 0.08, words_per_defect: 35 },
      'sim-consolidator': { recall: 0.7, false_positive_rate: 0.02, consolidator: { accept_true: 0.92, accept_false: 0.2, fill_recall: 0.35, fill_false_positive_rate: 0.005 } },
    },
  };
}

const cascade = (c: Record<string, unknown>) => ({ phase1: { strategy: 'cascade' as const, cascade: c } });

/** name -> config over the three jurors and the consolidator. */
export const FRONTIER_SYSTEMS: Record<string, Partial<JuryConfigInput>> = {
  single: { mode: 'single' },
  union: { mode: 'union' },
  majority: { mode: 'majority' },
  consolidation: { mode: 'consolidation' },
  'cascade 2+1, default rules, consolidation': { mode: 'consolidation', ...cascade({ start: 2, add: 'one' }) },
  'cascade 1+all, any_finding, consolidation': { mode: 'consolidation', ...cascade({ start: 1, add: 'all', rules: ['any_finding'] }) },
  'cascade 1+all, any_finding, union': { mode: 'union', ...cascade({ start: 1, add: 'all', rules: ['any_finding'] }) },
  // The other way round: more seats where the first one found nothing, where its misses are.
  'cascade 1+all, empty, union': { mode: 'union', ...cascade({ start: 1, add: 'all', rules: ['empty'] }) },
  'cascade 1+1, empty, union': { mode: 'union', ...cascade({ start: 1, add: 'one', rules: ['empty'] }) },
  'cascade 1+1, empty, consolidation': { mode: 'consolidation', ...cascade({ start: 1, add: 'one', rules: ['empty'] }) },
};

interface SystemResult {
  name: string;
  tokens: number;
  calls: number;
  seats: number;
  escalated: number;
  bf1: number;
  lo: number;
  hi: number;
}

async function judgeAllWith(recs: readonly TraceRecord[], over: Partial<JuryConfigInput>, rho: number): Promise<Verdict[]> {
  const sim = createSimProvider({ profile: parseProfile(frontierProfile(rho)), gold: buildGoldIndex([...recs]), latency: 'instant' });
  const config = parseConfig({
    endpoints: { sim: { kind: 'simulator', max_concurrency: 64 } },
    jurors: ['a', 'b', 'c'].map((m, i) => ({ id: `jury-${i}`, endpoint: 'sim', model: `sim-juror-${m}` })),
    consolidator: { id: 'consolidator', endpoint: 'sim', model: 'sim-consolidator' },
    cache: { enabled: false, dir: '.cache/none' },
    ...over,
  });
  const rt = await openRuntime({ config, auditLogPath: null, providerFor: () => sim });
  const queue = new PQueue({ concurrency: 16 });
  try {
    return (await Promise.all(
      recs.map((r) =>
        queue.add(async () => {
          const p = prepareRecord(r, config);
          if (!p.ok) throw new Error(p.error);
          return judgeRecord(rt.jury, p.input);
        }),
      ),
    )) as Verdict[];
  } finally {
    await rt.close();
  }
}

/** Every system at one ρ, scored on the same records (paired resamples). */
async function atCorrelation(recs: readonly TraceRecord[], scope: LabelScope, rho: number): Promise<SystemResult[]> {
  const golds = recs.map((r) => goldOf(r, scope));
  const runs: Array<{ name: string; verdicts: Verdict[]; agg: Aggregator<string> }> = [];
  for (const [name, over] of Object.entries(FRONTIER_SYSTEMS)) {
    const verdicts = await judgeAllWith(recs, over, rho);
    const confusions = verdicts.map((v, i) => recordConfusion(golds[i]!, predictionFromVerdict(v), { threshold: 'minor', propagate: false, failed: 'wrong' })!);
    runs.push({ name, verdicts, agg: stepAggregator(confusions) });
  }
  const cis = bootstrapMany(runs.map((r) => r.agg), { resamples: 2_000, seed: 0 });
  const sum = (vs: Verdict[], f: (v: Verdict) => number) => vs.reduce((a, v) => a + f(v), 0) / vs.length;
  return runs.map((r, i) => ({
    name: r.name,
    tokens: sum(r.verdicts, (v) => v.usage.reduce((a, u) => a + u.tokens_in + u.tokens_out, 0)),
    calls: sum(r.verdicts, (v) => v.usage.length),
    seats: sum(r.verdicts, (v) => v.cascade?.seats.length ?? v.jurors_total),
    escalated: sum(r.verdicts, (v) => (v.cascade && v.cascade.escalations.length > 0 ? 1 : 0)),
    bf1: r.agg.compute(null).balanced_f1!,
    lo: cis[i]!.balanced_f1!.lo,
    hi: cis[i]!.balanced_f1!.hi,
  }));
}

/** `FRONTIER_N` records (default 1000) and the comma-separated `FRONTIER_RHOS` (default 0,0.3,0.6), so one correlation can run alone. */
export function frontierFromEnv(): Promise<string> {
  const n = Number(process.env.FRONTIER_N ?? 1000);
  const rhos = (process.env.FRONTIER_RHOS ?? '0,0.3,0.6').split(',').map(Number);
  if (!Number.isInteger(n) || n < 1 || rhos.some((r) => !(r >= 0 && r <= 1))) throw new Error('FRONTIER_N must be a whole number >= 1 and FRONTIER_RHOS numbers in 0..1');
  return benchFrontier(n, rhos);
}

export async function benchFrontier(n = 1000, rhos: readonly number[] = [0, 0.3, 0.6]): Promise<string> {
  const dir = sharedDataDir();
  if (!dir) return `skipped: ${MISSING_DATA_MESSAGE}`;
  const all = loadBenchmark('processbench', join(dir, 'processbench'));
  const recs = sampleRecords(all.records, n, 0);
  const out = [
    `${recs.length} ProcessBench records (seed 0), jurors sim-juror-a (recall 0.75, FPR 0.03), -b (0.60, 0.05), -c (0.45, 0.08) in that seat order, consolidator sim-consolidator; in-process simulator, replies sized like a reasoning model; ` +
      'step Balanced F1 (minor+, first-error labels) with 95 % record-level bootstrap intervals (2,000 paired resamples); tokens are the simulator\'s characters / 4. "2+1": start with 2 seats, add one per escalation; "1+all": start with 1, add the rest at once.',
  ];
  for (const rho of rhos) {
    const rs = await atCorrelation(recs, all.scope, rho);
    const single = rs.find((r) => r.name === 'single')!;
    const full = rs.find((r) => r.name === 'consolidation')!;
    out.push('', `#### miss_correlation ${rho}`, '', '| system | Balanced F1 (95 % CI) | vs consolidation | tokens × single | calls / record | seats / record | escalated |', '|---|---|---|---|---|---|---|');
    for (const r of rs) {
      const ratio = r.tokens / single.tokens;
      const delta = (r.bf1 - full.bf1) * 100;
      out.push(`| ${r.name} | ${fmt(r.bf1 * 100, 1)} (${fmt(r.lo * 100, 1)}–${fmt(r.hi * 100, 1)}) | ${delta >= 0 ? '+' : ''}${fmt(delta, 1)} | ${fmt(ratio, 2)} | ${fmt(r.calls, 2)} | ${fmt(r.seats, 2)} | ${r.name.startsWith('cascade') ? fmt(r.escalated, 3) : '–'} |`);
    }
    const met = rs.filter((r) => r.name.startsWith('cascade') && r.tokens / single.tokens <= 2 && (full.bf1 - r.bf1) * 100 <= 1);
    out.push('', `Target (a cascade at ≤ 2.0× single-judge tokens within 1.0 Balanced-F1 point of consolidation): ${met.length > 0 ? `met by ${met.map((m) => m.name).join('; ')}` : 'not met'}.`);
  }
  return out.join('\n');
}
