import type { Impact } from '../../schemas/defect.js';
import { esc, fmt, stackedBarChart, type BarRow } from './svg.js';
import type { CategoryStepsRow, Fingerprints, LeafRow, ModelRow } from './tables.js';

/**
 * The fingerprint report: one self-contained HTML page (inline CSS and SVG, no scripts, no
 * external resources), one section per generator model. The fingerprint tables are also
 * embedded as JSON for anyone who wants the numbers without the Parquet files.
 */

export const SEVERITY_COLORS: Record<Impact, string> = { fatal: '#b2182b', major: '#e66101', minor: '#fdb863', neutral: '#9e9e9e' };
const SEVERITIES: readonly Impact[] = ['fatal', 'major', 'minor', 'neutral'];
const LEGEND = SEVERITIES.map((s) => ({ key: s, label: s, color: SEVERITY_COLORS[s] }));
const TOP_LEAVES = 3;

export interface ReportMeta {
  title: string;
  /** shown under the title: where the numbers come from */
  sources: string[];
  taxonomyName: string;
  notes: string[];
  correctKey: string;
}

const CSS = `
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:24px 32px;color:#222;max-width:1100px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:32px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:15px;margin:20px 0 6px}p.meta{color:#555;margin:2px 0}
table{border-collapse:collapse;margin:8px 0 16px;font-size:13px}th,td{border:1px solid #ddd;padding:3px 8px;text-align:right}
th{background:#f4f4f4}td.l,th.l{text-align:left}tr.cat td{background:#fafafa;font-weight:600}
svg{display:block;margin:6px 0 14px;font-size:12px;font-family:inherit}svg text{fill:#222}
svg .chart-title{font-weight:600;font-size:13px}svg .bar-group{font-weight:600}svg .legend{font-size:12px}svg .bar-total{fill:#444}
.note{color:#8a5a00;font-size:13px}`;

function table(head: string[], rows: string[][], leftCols = 1, rowAttrs: Array<Record<string, string>> = []): string {
  const th = head.map((h, i) => `<th${i < leftCols ? ' class="l"' : ''}>${esc(h)}</th>`).join('');
  const trs = rows.map((r, ri) => {
    const a = Object.entries(rowAttrs[ri] ?? {})
      .map(([k, v]) => ` ${k}="${esc(v)}"`)
      .join('');
    return `<tr${a}>${r.map((c, i) => `<td${i < leftCols ? ' class="l"' : ''}>${c}</td>`).join('')}</tr>`;
  });
  return `<table><thead><tr>${th}</tr></thead><tbody>${trs.join('')}</tbody></table>`;
}

/** A table cell whose number is also machine-readable. */
const num = (field: string, v: number, digits = 2) => `<span data-field="${field}" data-value="${v}">${esc(fmt(v, digits))}</span>`;

function modelSummary(rows: readonly ModelRow[]): string {
  return table(
    ['generator', 'traces', 'steps', 'defects', 'fatal defects', 'flagged steps', 'fatal', 'major', 'minor', 'neutral', 'unassigned defects', 'no verdict', 'answer correct'],
    rows.map((m) => [
      esc(m.generator),
      num('traces', m.traces),
      num('steps', m.steps),
      num('defects', m.defects),
      num('fatal_defects', m.fatal_defects),
      num('flagged_steps', m.flagged_steps),
      num('flagged_fatal', m.flagged_fatal),
      num('flagged_major', m.flagged_major),
      num('flagged_minor', m.flagged_minor),
      num('flagged_neutral', m.flagged_neutral),
      num('unassigned_defects', m.unassigned_defects),
      num('traces_without_verdict', m.traces_without_verdict),
      m.traces_with_correctness > 0 ? `${num('correct_traces', m.correct_traces)} / ${num('traces_with_correctness', m.traces_with_correctness)}` : 'n/a',
    ]),
    1,
    rows.map((m) => ({ 'data-table': 'fp_models', 'data-generator': m.generator })),
  );
}

function categoryChart(generator: string, rows: readonly CategoryStepsRow[]): string {
  const byCat = new Map<string, BarRow>();
  for (const r of rows) {
    let b = byCat.get(r.category_id);
    if (!b) byCat.set(r.category_id, (b = { id: r.category_id, label: r.category_name, segments: [] }));
    b.segments.push({ key: r.severity, label: r.severity, value: r.flagged_steps, color: SEVERITY_COLORS[r.severity] });
  }
  return stackedBarChart({ data: { 'data-chart': 'category-severity', 'data-generator': generator }, title: 'Flagged steps by category, stacked by severity (a step counts once per category, at its highest severity)', rows: [...byCat.values()], legend: LEGEND });
}

function topLeavesChart(generator: string, leaves: readonly LeafRow[]): string {
  const rows: BarRow[] = [];
  const seen = new Map<string, number>();
  for (const l of leaves) {
    const n = seen.get(l.category_id) ?? 0;
    if (n >= TOP_LEAVES) continue; // rows arrive sorted by defects within category
    seen.set(l.category_id, n + 1);
    rows.push({
      id: l.leaf_id,
      label: l.leaf_name,
      group: l.category_name,
      segments: SEVERITIES.map((s) => ({ key: s, label: s, value: l[`steps_${s}`], color: SEVERITY_COLORS[s] })),
    });
  }
  return stackedBarChart({ data: { 'data-chart': 'top-leaves', 'data-generator': generator }, title: `Flagged steps for the top ${TOP_LEAVES} leaves of each category, stacked by severity`, rows, legend: LEGEND });
}

function leafTable(leaves: readonly LeafRow[]): string {
  const rows: string[][] = [];
  const attrs: Array<Record<string, string>> = [];
  let cat = '';
  for (const l of leaves) {
    if (l.category_id !== cat) {
      cat = l.category_id;
      const total = leaves.filter((x) => x.category_id === cat).reduce((a, x) => a + x.defects, 0);
      rows.push([`${esc(l.category_name)} (${total} defects)`, '', '', '', '']);
      attrs.push({ class: 'cat' });
    }
    rows.push([esc(l.leaf_name), num('defects', l.defects), `${num('pct_of_defects', l.pct_of_defects, 1)}%`, num('fatal_defects', l.fatal_defects), num('flagged_steps', l.flagged_steps)]);
    attrs.push({ 'data-table': 'fp_leaves', 'data-generator': l.generator, 'data-leaf': l.leaf_id });
  }
  return table(['leaf', 'defects', '% of defects', 'fatal', 'flagged steps'], rows, 1, attrs);
}

function correctnessSection(generator: string, fp: Fingerprints, correctKey: string): string {
  const rows = fp.fp_correctness.filter((c) => c.generator === generator);
  if (!rows.some((c) => c.final_answer_correct !== null)) {
    return `<p class="note">No trace carries <code>meta.${esc(correctKey)}</code>, so defects cannot be split by final-answer correctness.</p>`;
  }
  const name = (v: boolean | null) => (v === null ? 'unknown' : v ? 'correct' : 'wrong');
  const bars: BarRow[] = rows.flatMap((c) => [
    { id: `${name(c.final_answer_correct)}:defects`, label: `answer ${name(c.final_answer_correct)}: defects per trace`, segments: [{ key: 'defects_per_trace', label: 'defects per trace', value: c.defects_per_trace, color: '#4a6fa5' }] },
    { id: `${name(c.final_answer_correct)}:fatal`, label: `answer ${name(c.final_answer_correct)}: fatal per trace`, segments: [{ key: 'fatal_per_trace', label: 'fatal defects per trace', value: c.fatal_per_trace, color: SEVERITY_COLORS.fatal }] },
  ]);
  const chart = stackedBarChart({ data: { 'data-chart': 'correctness', 'data-generator': generator }, title: 'Defects per trace by final-answer correctness', rows: bars });
  const t = table(
    ['final answer', 'traces', 'defects', 'fatal', 'defects / trace', 'fatal / trace'],
    rows.map((c) => [name(c.final_answer_correct), num('traces', c.traces), num('defects', c.defects), num('fatal_defects', c.fatal_defects), num('defects_per_trace', c.defects_per_trace), num('fatal_per_trace', c.fatal_per_trace)]),
    1,
    rows.map((c) => ({ 'data-table': 'fp_correctness', 'data-generator': generator, 'data-correct': String(c.final_answer_correct) })),
  );
  return chart + t;
}

/** JSON inside <script>: "<" escaped so no text can close the element. */
const scriptJson = (v: unknown) => JSON.stringify(v).replace(/</g, '\\u003c');

export function renderReport(fp: Fingerprints, meta: ReportMeta): string {
  const sections = fp.fp_models.map((m) => {
    const g = m.generator;
    const leaves = fp.fp_leaves.filter((l) => l.generator === g);
    return `<section class="generator" data-generator="${esc(g)}">
<h2>${esc(g)}</h2>
<p class="meta">${m.traces} traces, ${m.steps} steps, ${m.defects} defects; ${m.flagged_steps} distinct steps flagged (${m.flagged_fatal} fatal, ${m.flagged_major} major, ${m.flagged_minor} minor, ${m.flagged_neutral} neutral, each step at its highest severity).</p>
${categoryChart(g, fp.fp_category_steps.filter((r) => r.generator === g))}
${leaves.length > 0 ? topLeavesChart(g, leaves) : ''}
<h3>Leaf distribution</h3>
${leaves.length > 0 ? leafTable(leaves) : '<p class="note">No defects.</p>'}
<h3>Final-answer correctness</h3>
${correctnessSection(g, fp, meta.correctKey)}
</section>`;
  });
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(meta.title)}</title><style>${CSS}</style></head>
<body>
<h1>${esc(meta.title)}</h1>
${meta.sources.map((s) => `<p class="meta">${esc(s)}</p>`).join('\n')}
<p class="meta">Taxonomy: ${esc(meta.taxonomyName)}</p>
${meta.notes.map((n) => `<p class="note">${esc(n)}</p>`).join('\n')}
<p class="meta">These are the jury's judgements, not ground truth; counts are over this taxonomy and this segmentation.</p>
<h2>Generators</h2>
${modelSummary(fp.fp_models)}
${sections.join('\n')}
<script type="application/json" id="fingerprint-data">${scriptJson(fp)}</script>
</body></html>
`;
}
