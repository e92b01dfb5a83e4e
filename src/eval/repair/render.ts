/** Markdown for `eval repair` (the JSON form is the RepairAnalysis object itself). */
import { markdownTable } from 'markdown-table';
import type { RateInterval } from '../metrics/binomial.js';
import type { Estimate } from '../metrics/paired.js';
import type { RepairAnalysis } from './analyze.js';

const pct = (x: number): string => (Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : '–');
const pp = (x: number): string => (Number.isFinite(x) ? `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}` : '–');
const rate = (r: RateInterval): string => (Number.isFinite(r.rate) ? `${pct(r.rate)} [${pct(r.lo)}, ${pct(r.hi)}]` : '–');
const est = (e: Estimate, f = pct): string => (Number.isFinite(e.value) ? `${f(e.value)} [${f(e.lo)}, ${f(e.hi)}]` : '–');
const pval = (p: number): string => (p >= 0.001 ? p.toFixed(4) : p.toExponential(1));

function transitions(a: RepairAnalysis): string {
  const rows = a.transitions.map((t) => [t.gate, t.condition, String(t.retried), String(t.scored), String(t.fixed), String(t.regressed), String(t.right_right), String(t.wrong_wrong), String(t.net), rate(t.fix_rate), rate(t.regression_rate), `${pct(t.accuracy_before.rate)} → ${pct(t.accuracy_after.rate)}`, `${t.failed} / ${t.no_reference}`]);
  return markdownTable([['gate', 'condition', 'retried', 'scored', 'wrong→right', 'right→wrong', 'right→right', 'wrong→wrong', 'net', 'fix rate', 'regression rate', 'accuracy', 'failed / no ref'], ...rows]);
}

function corpus(a: RepairAnalysis): string {
  const c = a.corpus;
  if (!c) return '_Not computed (see the notes): give --originals, or an output with its corpus._';
  const o = a.originals;
  const from = o ? `Original correctness ${o.from === 'file' ? `from --originals ${o.location}` : `derived from the corpus of ${o.location} (the repair step's extraction and comparison)`}: ${o.records} records, ${o.no_reference} without a reference answer.\n\n` : '';
  const rows = [['(none)', 'original', '0', '0.0%', est(c.before), '–'], ...c.gates.map((g) => [g.gate, g.condition, String(g.retried), pct(g.retried_share), est(g.after), est(g.delta, pp)])];
  return `${from}${c.records} records with a reference over ${c.problems} problems (${c.no_reference} without one, left out).\n\n${markdownTable([['gate', 'condition', 'retried', 'share retried', 'corpus accuracy', 'Δ (pp)'], ...rows])}`;
}

function comparisons(a: RepairAnalysis): string {
  if (a.comparisons.length === 0) return '_No gate has records retried under both conditions._';
  const rows = a.comparisons.map((c) => [c.gate, `${c.a} − ${c.b}`, String(c.items), String(c.units), pct(c.accuracy_before), `${pct(c.accuracy_a)} vs ${pct(c.accuracy_b)}`, `${c.mcnemar.onlyA} / ${c.mcnemar.onlyB}`, pval(c.mcnemar.p), pval(c.mcnemar.mid_p), est(c.pooled_diff, pp), est(c.unit_mean_diff, pp), `${c.units_a_better} / ${c.units_b_better} / ${c.units_tied}`]);
  return markdownTable([['gate', 'a − b', 'records', 'problems', 'before', 'accuracy a vs b', 'only a / only b', 'McNemar p', 'mid-p', 'Δ pooled (pp)', 'Δ problem mean (pp)', 'problems a>b / a<b / tie'], ...rows]);
}

export function renderRepairMarkdown(a: RepairAnalysis): string {
  const s = a.settings;
  const lvl = `${Math.round(s.level * 100)} %`;
  return [
    '# Repair analysis',
    '',
    `${a.rows} repairs rows; attempts: ${s.attempts === 'first' ? 'first attempt' : 'any attempt right counts as right'}; intervals ${lvl} (Wilson for rates; bootstrap over ${s.bootstrap_unit}, ${s.resamples} resamples, seed ${s.seed}).`,
    '',
    '## Transitions (retried records with a reference)',
    '',
    transitions(a),
    '',
    '## Corpus accuracy under each gate',
    '',
    corpus(a),
    '',
    '## Paired comparison of conditions',
    '',
    comparisons(a),
    ...(a.notes.length ? ['', '## Notes', '', ...a.notes.map((n) => `- ${n}`)] : []),
    '',
  ].join('\n');
}
