import { markdownTable } from 'markdown-table';
import type { LedgerSummary } from '../llm/ledger.js';
import type { CostRow } from './cost.js';
import type { PairedDelta } from './passes.js';
import type { Estimate, ScoreOptions, SystemScore } from './score.js';
import type { PairedRow } from './paired-ladder.js';
import type { BenchmarkName, MissingReason } from './types.js';

export interface KnockoutSummary {
  size: number;
  jurors: string[];
  dropped: string | null;
  unique_gold_steps: Record<string, number>;
  /** names of the systems scored at this size (see `systems`) */
  systems: string[];
}

export interface AnalyticRow {
  system: string;
  predicted: Record<string, number>;
  /** per metric: does the prediction lie inside the observed bootstrap interval? */
  within_ci: Record<string, boolean>;
}

/** Everything `reasoning-jury eval` found, as written to eval.json. */
export interface EvalReport {
  benchmark: BenchmarkName;
  data: string;
  created_at: string;
  options: ScoreOptions;
  records: {
    loaded: number;
    skipped_by_adapter: number;
    selected: number;
    judged: number;
    scored: number;
    /** selected records without a usable verdict (scored as wrong unless --missing exclude), by reason */
    missing: number;
    missing_by_reason: Record<MissingReason, number>;
    unmatched: number;
    mismatched: number;
    unprepared: number;
    /** verdicts read for a record that already had one (the first is scored) */
    duplicates: number;
  };
  /** benchmark items the adapter could not use, and why */
  skipped: Array<{ source: string; reason: string }>;
  /** scored steps by gold label: erroneous, correct, unlabelled (left out) */
  steps: { erroneous: number; correct: number; unlabelled: number };
  systems: SystemScore[];
  knockout: KnockoutSummary[];
  /** paired bootstrap of the Balanced F1 difference between every two ladder systems */
  paired: PairedRow[];
  cost: CostRow[];
  cost_baseline: string | null;
  ledger: LedgerSummary | null;
  analytic: AnalyticRow[];
  /** the verification passes against the consensus before them, paired by record (absent: no pass ran) */
  passes?: PairedDelta[];
  notes: string[];
}

const pct = (x: number | null, d = 1): string => (x === null ? '–' : (100 * x).toFixed(d));
export const withCi = (e: Estimate | undefined): string => (!e || e.value === null ? '–' : e.lo === null || e.hi === null ? pct(e.value) : `${pct(e.value)} [${pct(e.lo)}, ${pct(e.hi)}]`);
const int = (n: number): string => n.toLocaleString('en-US');
const times = (x: number | null | undefined): string => (x === null || x === undefined ? '–' : `${x.toFixed(2)}×`);

const table = (rows: string[][]) => markdownTable(rows, { alignDelimiters: true });

export function stepTable(systems: readonly SystemScore[]): string {
  return table([
    ['system', 'Bal-F1 [95% CI]', 'Bal-Acc', 'Acc', 'Precision', 'Recall', 'F1', 'Specificity', 'records'],
    ...systems.map((s) => [s.system, withCi(s.step.balanced_f1), pct(s.step.balanced_accuracy.value), pct(s.step.accuracy.value), pct(s.step.precision.value), pct(s.step.recall.value), pct(s.step.f1.value), pct(s.step.specificity.value), `${s.records.scored}${s.records.failed ? ` (${s.records.failed} failed)` : ''}`]),
  ]);
}

/** The protocol's headline with its interval, then its other keys without. */
export function protocolTable(systems: readonly SystemScore[]): string {
  const first = systems[0];
  if (!first) return '';
  const head = first.protocol.headline;
  // Per-split accuracies and the unfiltered precision/recall stay in eval.json; the table keeps F1s.
  // PRMBench's evaluator F1s (with their -1 sentinels) and per-domain precision/recall too.
  const hidden = /^(acc_err:|acc_cor:|unfiltered_(macro|micro)_(precision|recall)|prm_score_raw$|f1_(pos|neg):|(macro|micro)_(precision|recall):)/;
  const others = Object.keys(first.protocol.metrics).filter((k) => k !== head && !hidden.test(k));
  // PRMBench's tables print a PRMScore at or below zero as "-".
  const cell = (k: string, e: Estimate | undefined) => (/^prm_(score|avg)/.test(k) && e?.value !== null && e?.value !== undefined && e.value <= 0 ? '–' : pct(e?.value ?? null));
  return table([['system', `${head} [95% CI]`, ...others], ...systems.map((s) => [s.system, withCi(s.protocol.metrics[head]), ...others.map((k) => cell(k, s.protocol.metrics[k]))])]);
}

const signed = (x: number | null): string => (x === null ? '–' : `${x > 0 ? '+' : ''}${(100 * x).toFixed(1)}`);

/** Balanced F1 of A minus B with its paired interval; "yes" when the interval leaves out 0. */
export function pairedTable(rows: readonly PairedRow[]): string {
  if (rows.length === 0) return '';
  return table([
    ['A', 'B', 'Bal-F1 A − B [95% CI]', 'interval excludes 0'],
    ...rows.map((r) => [r.a, r.b, `${signed(r.diff)} [${signed(r.lo)}, ${signed(r.hi)}]`, r.lo === null || r.hi === null ? '–' : r.lo > 0 || r.hi < 0 ? 'yes' : 'no']),
  ]);
}

export function knockoutTable(rounds: readonly KnockoutSummary[], scores: ReadonlyMap<string, SystemScore>): string {
  if (rounds.length === 0) return '';
  const cols = Math.max(...rounds.map((r) => r.systems.length));
  const head = ['union', 'majority', 'Phase 2'].slice(0, cols);
  return table([
    ['jurors', 'dropped', 'seats', ...head.map((h) => `${h} Bal-F1`), 'unique gold catches'],
    ...rounds.map((r) => [String(r.size), r.dropped ?? '–', r.jurors.join(', '), ...Array.from({ length: cols }, (_, i) => withCi(scores.get(r.systems[i] ?? '')?.step.balanced_f1)), Object.entries(r.unique_gold_steps).map(([k, v]) => `${k}: ${v}`).join(', ')]),
  ]);
}

export function costMarkdown(rows: readonly CostRow[], baseline: string | null): string {
  if (rows.length === 0) return '';
  return table([
    ['system', 'calls', 'input tokens', 'output tokens', '$ total', '$ per record', `calls ×${baseline ? '' : ' (no baseline)'}`, 'tokens ×', '$ ×'],
    ...rows.map((r) => [r.system, int(r.calls), int(r.tokens_in), int(r.tokens_out), r.cost_usd.toFixed(4), r.cost_per_record.toFixed(6), times(r.ratio?.calls), times(r.ratio?.tokens_total), times(r.ratio?.cost_usd)]),
  ]);
}

export function analyticTable(rows: readonly AnalyticRow[], scores: ReadonlyMap<string, SystemScore>): string {
  if (rows.length === 0) return '';
  const keys = ['recall', 'specificity', 'balanced_f1', 'precision'] as const;
  return table([
    ['system', ...keys.flatMap((k) => [`${k} predicted`, `${k} observed [95% CI]`])],
    ...rows.map((r) => [r.system, ...keys.flatMap((k) => [`${pct(r.predicted[k] ?? null)}${r.within_ci[k] === false ? ' ✗' : ''}`, withCi(scores.get(r.system)?.step[k])])]),
  ]);
}

const points = (x: number | null): string => (x === null ? '–' : `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}`);
const delta = (e: Estimate): string => (e.value === null ? '–' : e.lo === null || e.hi === null ? points(e.value) : `${points(e.value)} [${points(e.lo)}, ${points(e.hi)}]`);

/** Each pass rung minus the consensus before the passes, in points, with paired intervals. */
export function passDeltaTable(rows: readonly PairedDelta[]): string {
  if (rows.length === 0) return '';
  return table([['system', 'vs.', 'Δ precision [95% CI]', 'Δ recall [95% CI]', 'Δ Bal-F1 [95% CI]'], ...rows.map((r) => [r.system, r.baseline, delta(r.precision), delta(r.recall), delta(r.balanced_f1)])]);
}

/** The Markdown report (eval.md); the CLI prints the same text. */
export function renderMarkdown(r: EvalReport): string {
  const scores = new Map(r.systems.map((s) => [s.system, s]));
  const ladder = r.systems.filter((s) => s.kind !== 'knockout');
  const o = r.options;
  const lines = [
    `# Evaluation: ${r.benchmark}`,
    '',
    `Data: \`${r.data}\` — ${int(r.records.loaded)} records loaded (${r.records.skipped_by_adapter} skipped by the adapter), ${int(r.records.selected)} selected, ${int(r.records.scored)} scored` +
      (r.records.missing ? `, ${r.records.missing} without a usable verdict (${o.missing === 'wrong' ? 'scored as wrong' : 'left out'})` : '') +
      (r.records.duplicates ? `, ${r.records.duplicates} repeated verdicts ignored (first kept)` : '') +
      (r.records.mismatched ? `, ${r.records.mismatched} of them with a different step count` : '') +
      (r.records.unmatched ? `, ${r.records.unmatched} verdicts not in the benchmark` : '') +
      '.',
    `Steps scored: ${int(r.steps.erroneous)} erroneous, ${int(r.steps.correct)} correct (${int(r.steps.unlabelled)} unlabelled steps left out).`,
    `Severity threshold: ${o.threshold}+; propagation: ${o.propagate ? 'on' : 'off'}; failed verdicts: ${o.failed}; records without a verdict: ${o.missing}; ` +
      `${Math.round(o.level * 100)} % bootstrap intervals from ${int(o.resamples)} record-level resamples (seed ${o.seed}). Numbers are percentages.`,
    '',
    '## Step level (pooled over all steps)',
    '',
    stepTable(ladder),
    '',
    `## ${r.systems[0]?.protocol.name ?? 'protocol'} protocol`,
    '',
    protocolTable(ladder),
  ];
  if (r.paired.length) lines.push('', '## Paired differences (row-level paired bootstrap, same resamples)', '', pairedTable(r.paired));
  if (r.knockout.length) lines.push('', '## Knockout (Phase 1 fixed, Phase 2 re-run)', '', knockoutTable(r.knockout, scores));
  if (r.passes?.length) lines.push('', '## Verification passes (paired by record, points)', '', passDeltaTable(r.passes));
  if (r.analytic.length) lines.push('', '## Observed vs. predicted from the simulator profile', '', analyticTable(r.analytic, scores));
  if (r.cost.length) lines.push('', `## Cost${r.cost_baseline ? ` (ratios to ${r.cost_baseline})` : ''}`, '', costMarkdown(r.cost, r.cost_baseline));
  if (r.notes.length) lines.push('', '## Notes', '', ...r.notes.map((n) => `- ${n}`));
  return `${lines.join('\n')}\n`;
}
