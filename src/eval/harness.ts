import type { ParticipantConfig } from '../../schemas/config.js';
import type { TraceRecord } from '../../schemas/trace.js';
import type { Verdict } from '../../schemas/verdict.js';
import type { JudgeInput } from '../jury/judge.js';
import type { PriceTable } from '../llm/ledger.js';
import type { JuryRuntime } from '../jury/runtime.js';
import { costTable } from './cost.js';
import { goldOf, stepLabels } from './gold.js';
import { knockout, type Phase2Runner, phase2System } from './knockout.js';
import { jurorIds, ladderSystems, type System } from './ladder.js';
import type { StepMetric } from './metrics/step.js';
import type { AnalyticRow, EvalReport, KnockoutSummary } from './report.js';
import { pairedDeltas } from './passes.js';
import { consolidationRunner, deliberationRunner } from './run.js';
import { pairedLadder } from './paired-ladder.js';
import { firstVerdicts } from './predictions.js';
import { matchRecords, type ScoreOptions, scoreSystems } from './score.js';
import type { LoadedBenchmark, StepPrediction } from './types.js';

export interface EvaluateInput {
  loaded: LoadedBenchmark;
  dataPath: string;
  /** the records put forward (a sample or all) */
  selected: readonly TraceRecord[];
  /** verdicts with Phase 1 judgements (the ladder is built from them) ... */
  verdicts?: readonly Verdict[];
  /** ... or final predictions only (shards carry no Phase 1 judgements) */
  predictions?: ReadonlyMap<string, StepPrediction>;
  /** a live jury: needed to re-run Phase 2 for the knockout and the moderator sweep */
  runtime?: JuryRuntime;
  inputs?: ReadonlyMap<string, JudgeInput>;
  unprepared?: number;
  /** records whose verdict line could not be read (they count as missing, reason `unreadable`) */
  unreadable?: readonly string[];
  knockout?: boolean;
  /** consolidator seats to sweep, Phase 1 held fixed */
  moderators?: readonly ParticipantConfig[];
  costBaseline?: string;
  prices?: PriceTable;
  score: ScoreOptions;
  /** predicted step metrics per system name, given the scored positives/negatives (benchmarks) */
  analytic?: (positives: number, negatives: number) => Array<{ system: string; predicted: Record<StepMetric, number> }>;
  notes?: string[];
  concurrency?: number;
}

/** Phase 2 as the live jury runs it: consolidation, or deliberation chaired by `seat`. */
function phase2RunnerFor(e: EvaluateInput, seat: ParticipantConfig | undefined, label?: string): Phase2Runner | undefined {
  const mode = e.runtime?.jury.config.mode;
  if (!e.runtime || !e.inputs || !seat || (mode !== 'consolidation' && mode !== 'deliberation')) return undefined;
  return mode === 'deliberation' ? deliberationRunner(e.runtime, e.inputs, seat, label) : consolidationRunner(e.runtime, e.inputs, seat, label);
}

/** The seat Phase 2 re-runs use: the consolidator, or the deliberation moderator. */
export function phase2Seat(config: { mode: string; consolidator?: ParticipantConfig | undefined; moderator?: ParticipantConfig | undefined }): ParticipantConfig | undefined {
  return config.mode === 'deliberation' ? config.moderator : config.consolidator;
}

/** What the input can score: the ladder built from verdicts, or the final predictions of shards. */
function baseSystems(e: EvaluateInput): { systems: System[]; withPhase1: boolean } {
  const withPhase1 = (e.verdicts ?? []).some((v) => v.phase1_judgements.length > 0);
  if (e.verdicts) return { systems: withPhase1 ? ladderSystems(e.verdicts) : ladderSystems(e.verdicts).filter((s) => s.kind === 'final'), withPhase1 };
  return { systems: [{ name: 'jury (shards)', kind: 'final', predictions: new Map(e.predictions ?? []), usage: new Map() }], withPhase1 };
}

/** Drop jurors one at a time; each round's systems join the report as `knockout` rows. */
async function knockoutRounds(
  e: EvaluateInput,
  verdicts: readonly Verdict[],
  goldById: Map<string, ReturnType<typeof goldOf>>,
  systems: readonly System[],
  notes: string[],
): Promise<{ rounds: KnockoutSummary[]; extra: System[] }> {
  const rounds: KnockoutSummary[] = [];
  const extra: System[] = [];
  const config = e.runtime?.jury.config;
  const ids = jurorIds(verdicts);
  const runner = config ? phase2RunnerFor(e, phase2Seat(config)) : undefined;
  if (!runner) notes.push('Knockout without a live consolidating or deliberating jury: only union and majority are re-computed per size.');
  const full = systems.find((s) => s.kind === 'final');
  const out = await knockout(verdicts, goldById, ids, { threshold: e.score.threshold, propagate: e.score.propagate, ...(runner ? { runner } : {}), ...(full ? { full } : {}), concurrency: e.concurrency ?? 16 });
  for (const r of out) {
    rounds.push({ size: r.size, jurors: r.jurors, dropped: r.dropped, unique_gold_steps: r.unique_gold_steps, systems: r.systems.map((s) => s.name) });
    extra.push(...r.systems.map((s) => ({ ...s, kind: 'knockout' as const })));
  }
  return { rounds, extra };
}

/** Re-run Phase 2 with each swept seat, Phase 1 held fixed. */
async function moderatorSweep(e: EvaluateInput, verdicts: readonly Verdict[], withPhase1: boolean, notes: string[]): Promise<System[]> {
  const mode = e.runtime?.jury.config.mode;
  const swept: System[] = [];
  for (const seat of e.moderators ?? []) {
    const runner = phase2RunnerFor(e, seat, `${mode === 'deliberation' ? 'deliberation moderated' : 'consolidation'} by ${seat.model}`);
    if (!runner || !withPhase1) {
      notes.push(`Moderator ${seat.model} not swept: it needs a live jury and verdicts with Phase 1 judgements.`);
      continue;
    }
    const all = jurorIds(verdicts);
    swept.push(await phase2System(runner.label, 'moderator', verdicts, all, runner, e.concurrency ?? 16));
  }
  return swept;
}

function countSteps(golds: ReturnType<typeof matchRecords>['golds'], propagate: boolean): EvalReport['steps'] {
  const stepCounts = { erroneous: 0, correct: 0, unlabelled: 0 };
  for (const g of golds) for (const l of stepLabels(g, propagate)) l === 1 ? stepCounts.erroneous++ : l === 0 ? stepCounts.correct++ : stepCounts.unlabelled++;
  return stepCounts;
}

function costOf(e: EvaluateInput, everything: readonly System[], recordIds: string[]): { cost: EvalReport['cost']; baseline: string | null } {
  // Knockout rows repeat union/majority at each size; only their Phase 2 re-runs cost anything new.
  const costed = everything.filter((s) => s.usage.size > 0 && (s.kind !== 'knockout' || /^(consolidation|deliberation)/.test(s.name)));
  const baseline = e.costBaseline ?? costed.find((s) => s.kind === 'solo')?.name ?? null;
  return { cost: costTable(costed, recordIds, baseline ?? undefined, e.prices), baseline };
}

/** Predicted step metrics next to the measured ones: is each prediction inside the CI? */
function analyticRows(e: EvaluateInput, scores: EvalReport['systems'], steps: EvalReport['steps']): AnalyticRow[] {
  const analytic: AnalyticRow[] = [];
  const byName = new Map(scores.map((s) => [s.system, s]));
  for (const a of e.analytic?.(steps.erroneous, steps.correct) ?? []) {
    const seen = byName.get(a.system);
    if (!seen) continue;
    const within: Record<string, boolean> = {};
    for (const [k, v] of Object.entries(a.predicted)) {
      const ci = seen.step[k as StepMetric];
      if (ci && ci.lo !== null && ci.hi !== null) within[k] = v >= ci.lo && v <= ci.hi;
    }
    analytic.push({ system: a.system, predicted: a.predicted, within_ci: within });
  }
  return analytic;
}

function recordCounts(e: EvaluateInput, judged: number, matched: ReturnType<typeof matchRecords>, duplicates: number): EvalReport['records'] {
  return {
    missing_by_reason: matched.missing_by_reason,
    duplicates,
    loaded: e.loaded.records.length,
    skipped_by_adapter: e.loaded.skipped.length,
    selected: e.selected.length,
    judged,
    scored: matched.golds.length,
    missing: matched.missing,
    unmatched: matched.unmatched.length,
    mismatched: matched.mismatched.length,
    unprepared: e.unprepared ?? 0,
  };
}

/** The report's line on selected records without a verdict: how many, why, and what was done. */
export function missingNote(by: Record<string, number>, policy: ScoreOptions['missing']): string {
  const why = Object.entries(by)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${n} ${k === 'no_verdict' ? 'never judged' : k === 'unreadable' ? 'with an unreadable verdict line' : 'with a different step count'}`)
    .join(', ');
  return `${Object.values(by).reduce((a, b) => a + b, 0)} selected records have no usable verdict (${why}): ${policy === 'wrong' ? 'scored as wrong answers (--missing exclude leaves them out)' : 'left out (--missing exclude)'}.`;
}

/** The pass rungs and the final verdict against the consensus before the passes. */
function passDeltasOf(golds: ReturnType<typeof matchRecords>['golds'], systems: readonly System[], opts: ScoreOptions) {
  // passRungs puts the baseline (the consensus before any pass) first.
  const base = systems.find((s) => s.kind === 'pass');
  if (!base) return [];
  const rungs = systems.filter((s) => (s.kind === 'pass' && s !== base) || s.kind === 'final');
  return pairedDeltas(golds, base, rungs, opts);
}

/**
 * Score one run (or stored verdicts) against the benchmark's gold: the ladder of solo jurors,
 * union, majority and the jury's Phase 2, optionally the knockout and a moderator sweep (both
 * re-run Phase 2 only), the cost of each, and the benchmark's own protocol.
 */
export async function evaluate(e: EvaluateInput): Promise<{ report: EvalReport; systems: System[] }> {
  const notes = [...(e.notes ?? [])];
  const golds = e.selected.map((r) => goldOf(r, e.loaded.scope));
  const goldById = new Map(golds.map((g) => [g.record_id, g]));
  const once = firstVerdicts(e.verdicts ?? []);
  if (once.duplicates) notes.push(`${once.duplicates} repeated verdicts for a record (first: ${once.first_duplicate}); the first one read is scored.`);
  const { systems, withPhase1 } = baseSystems(e.verdicts ? { ...e, verdicts: once.verdicts } : e);
  if (!withPhase1) notes.push('No Phase 1 judgements in the input (shards keep only the final verdict): the ladder, knockout and sweep need verdict JSONL.');
  const primary = systems.find((s) => s.kind === 'final')!;
  const matched = matchRecords(golds, primary.predictions, e.score.missing, new Set(e.unreadable ?? []));
  const ids = new Set(matched.golds.map((g) => g.record_id));
  const verdicts = once.verdicts.filter((v) => ids.has(v.record_id) && !matched.reasons.has(v.record_id));
  if (matched.mismatched.length) notes.push(`${matched.mismatched.length} records have a different step count than the benchmark (first: ${matched.mismatched[0]!.record_id}, ${matched.mismatched[0]!.gold_steps} vs ${matched.mismatched[0]!.predicted_steps}); was the run segmented differently?`);
  if (matched.missing) notes.push(missingNote(matched.missing_by_reason, e.score.missing));

  const { rounds, extra } = e.knockout && withPhase1 ? await knockoutRounds(e, verdicts, goldById, systems, notes) : { rounds: [], extra: [] };
  extra.push(...(await moderatorSweep(e, verdicts, withPhase1, notes)));

  const everything = [...systems, ...extra];
  const scores = scoreSystems(e.loaded.benchmark, matched.golds, everything, e.score, matched.reasons);
  const stray = scores.filter((s) => s.records.stray_defects > 0);
  if (stray.length) notes.push(`Defects citing only steps that do not exist flag nothing: ${stray.map((s) => `${s.system} ${s.records.stray_defects}`).join(', ')}.`);
  const steps = countSteps(matched.golds, e.score.propagate);
  const { cost, baseline } = costOf(e, everything, matched.golds.map((g) => g.record_id));
  const analytic = analyticRows(e, scores, steps);
  const passes = passDeltasOf(matched.golds, systems, e.score);
  const report: EvalReport = {
    benchmark: e.loaded.benchmark,
    data: e.dataPath,
    created_at: new Date().toISOString(),
    options: e.score,
    records: recordCounts(e, primary.predictions.size, matched, once.duplicates),
    skipped: e.loaded.skipped,
    steps,
    systems: scores,
    knockout: rounds,
    paired: pairedLadder(matched.golds, systems, e.score, matched.reasons),
    cost,
    cost_baseline: baseline,
    ledger: e.runtime ? e.runtime.gateway.ledger.summary() : null,
    analytic,
    ...(passes.length ? { passes } : {}),
    notes,
  };
  return { report, systems: everything };
}
