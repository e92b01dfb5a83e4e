import { IMPACT_RANK, IMPACTS, type Impact } from '../../schemas/defect.js';
import type { Taxonomy } from '../taxonomy/schema.js';
import { UNASSIGNED, type CategoryStepsRow, type CorrectnessRow, type Fingerprints, type LeafRow, type ModelRow } from './tables.js';

/**
 * Defect fingerprints per generator model (paper §5.2-5.3, App. K): flagged steps by category
 * and severity, the leaf distribution, and defects per trace split by final-answer correctness.
 * Pure: rows in, tables out, so the numbers can be checked against SQL over the same shards.
 */

export interface TraceIn {
  /** unique per trace across everything pooled (record ids may repeat across runs) */
  key: string;
  n_steps: number;
  error: string | null;
  /** the verdict row's meta JSON */
  meta: string | null;
}

export interface DefectIn {
  trace: string;
  statement_refs: readonly number[];
  impact: Impact;
  category_id: string | null;
  leaf_id: string | null;
}

export interface FingerprintOptions {
  taxonomy: Taxonomy;
  /** meta key naming the model that wrote the trace */
  generatorKey: string;
  /** meta key holding whether the final answer was right (true/false) */
  correctKey: string;
}

export interface FingerprintResult {
  tables: Fingerprints;
  /** defects whose leaf id the taxonomy does not know (shown by id) */
  unknownLeaves: number;
  /** defects whose record has no verdict row (skipped) */
  orphanDefects: number;
}

export const UNKNOWN_GENERATOR = '(unknown)';
const SEVERITIES_DESC: readonly Impact[] = [...IMPACTS].reverse(); // fatal first
const RANKED: readonly Impact[] = IMPACTS; // rank -> impact

function metaOf(meta: string | null): Record<string, unknown> {
  if (!meta) return {};
  try {
    const v: unknown = JSON.parse(meta);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** true / false (also the strings "true" / "false"); anything else is unknown. */
export function correctnessOf(meta: Record<string, unknown>, key: string): boolean | null {
  const v = meta[key];
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === 'false') return v === 'true';
  return null;
}

interface Node {
  id: string;
  name: string;
  order: number;
}

/** Max severity rank per (trace, step) within one group. */
type StepMax = Map<string, number>;
const bumpStep = (m: StepMax, step: string, rank: number) => m.set(step, Math.max(m.get(step) ?? -1, rank));
function bySeverity(m: StepMax): Record<Impact, number> {
  const out: Record<Impact, number> = { neutral: 0, minor: 0, major: 0, fatal: 0 };
  for (const r of m.values()) out[RANKED[r]!] += 1;
  return out;
}

interface GenAcc {
  traces: number;
  noVerdict: number;
  steps: number;
  defects: number;
  fatal: number;
  unassigned: number;
  flagged: StepMax;
  byCategory: Map<string, StepMax>;
  byLeaf: Map<string, { defects: number; fatal: number; steps: StepMax }>;
  correctness: Map<string, { value: boolean | null; traces: number; defects: number; fatal: number }>;
}

type LeafNode = Node & { category: string };

/** Categories and leaves in taxonomy order; unknown leaf ids (and the unassigned pseudo node) join as they appear. */
class Nodes {
  readonly categories = new Map<string, Node>();
  readonly leaves = new Map<string, LeafNode>();
  /** defects whose leaf id the taxonomy does not know */
  unknownLeaves = 0;

  constructor(taxonomy: Taxonomy) {
    taxonomy.categories.forEach((c, ci) => {
      this.categories.set(c.id, { id: c.id, name: c.name, order: ci });
      c.leaves.forEach((l, li) => this.leaves.set(l.id, { id: l.id, name: l.name, order: ci * 1000 + li, category: c.id }));
    });
  }

  leafFor(d: DefectIn): LeafNode {
    const { categories, leaves } = this;
    const id = d.leaf_id ?? UNASSIGNED;
    const known = leaves.get(id);
    if (known) return known;
    if (d.leaf_id !== null) this.unknownLeaves++;
    const cat = d.leaf_id === null ? UNASSIGNED : (d.category_id ?? id.split('.')[0]!);
    if (!categories.has(cat)) categories.set(cat, { id: cat, name: cat === UNASSIGNED ? 'Unassigned' : cat, order: 1e6 + categories.size });
    const node = { id, name: id === UNASSIGNED ? 'Unassigned' : id, order: categories.get(cat)!.order * 1000, category: cat };
    leaves.set(id, node);
    return node;
  }
}

function generatorOf(meta: Record<string, unknown>, key: string): string {
  const g = meta[key];
  return typeof g === 'string' && g.trim() !== '' ? g : UNKNOWN_GENERATOR;
}

const newGenAcc = (): GenAcc => ({ traces: 0, noVerdict: 0, steps: 0, defects: 0, fatal: 0, unassigned: 0, flagged: new Map(), byCategory: new Map(), byLeaf: new Map(), correctness: new Map() });

/** Which trace a defect belongs to: its generator's accumulator and its correctness key. */
type TraceInfo = Map<string, { gen: GenAcc; correct: string }>;

/** Traces counted per generator and correctness. */
function addTraces(traces: readonly TraceIn[], o: FingerprintOptions): { gens: Map<string, GenAcc>; traceInfo: TraceInfo } {
  const gens = new Map<string, GenAcc>();
  const traceInfo: TraceInfo = new Map();
  for (const t of traces) {
    const meta = metaOf(t.meta);
    const g = generatorOf(meta, o.generatorKey);
    let acc = gens.get(g);
    if (!acc) gens.set(g, (acc = newGenAcc()));
    // No verdict means no judgement, not "no defects": such traces stay out of the rates.
    if (t.error !== null) {
      acc.noVerdict++;
      continue;
    }
    acc.traces++;
    acc.steps += t.n_steps;
    const value = correctnessOf(meta, o.correctKey);
    const ck = String(value);
    const c = acc.correctness.get(ck) ?? { value, traces: 0, defects: 0, fatal: 0 };
    c.traces++;
    acc.correctness.set(ck, c);
    traceInfo.set(t.key, { gen: acc, correct: ck });
  }
  return { gens, traceInfo };
}

/** Defects counted on their trace's generator; returns how many had no judged trace (orphans). */
function addDefects(defects: readonly DefectIn[], traceInfo: TraceInfo, nodes: Nodes): number {
  let orphanDefects = 0;
  for (const d of defects) {
    const info = traceInfo.get(d.trace);
    if (!info) {
      orphanDefects++;
      continue;
    }
    const acc = info.gen;
    const leaf = nodes.leafFor(d);
    const rank = IMPACT_RANK[d.impact];
    const fatal = d.impact === 'fatal' ? 1 : 0;
    acc.defects++;
    acc.fatal += fatal;
    if (leaf.id === UNASSIGNED) acc.unassigned++;
    const c = acc.correctness.get(info.correct)!;
    c.defects++;
    c.fatal += fatal;
    const l = acc.byLeaf.get(leaf.id) ?? { defects: 0, fatal: 0, steps: new Map() };
    l.defects++;
    l.fatal += fatal;
    acc.byLeaf.set(leaf.id, l);
    let cat = acc.byCategory.get(leaf.category);
    if (!cat) acc.byCategory.set(leaf.category, (cat = new Map()));
    for (const s of new Set(d.statement_refs)) {
      const step = `${d.trace}\u0000${s}`;
      bumpStep(acc.flagged, step, rank);
      bumpStep(cat, step, rank);
      bumpStep(l.steps, step, rank);
    }
  }
  return orphanDefects;
}

function modelRow(generator: string, acc: GenAcc): ModelRow {
  const flagged = bySeverity(acc.flagged);
  const known = [...acc.correctness.values()].filter((c) => c.value !== null);
  return {
    generator,
    traces: acc.traces,
    traces_without_verdict: acc.noVerdict,
    steps: acc.steps,
    defects: acc.defects,
    fatal_defects: acc.fatal,
    unassigned_defects: acc.unassigned,
    flagged_steps: acc.flagged.size,
    flagged_fatal: flagged.fatal,
    flagged_major: flagged.major,
    flagged_minor: flagged.minor,
    flagged_neutral: flagged.neutral,
    traces_with_correctness: known.reduce((a, c) => a + c.traces, 0),
    correct_traces: acc.correctness.get('true')?.traces ?? 0,
  };
}

/** Every taxonomy category, zeros included; pseudo/unknown categories only where they occur. */
function categoryRows(generator: string, acc: GenAcc, catOrder: readonly Node[]): CategoryStepsRow[] {
  const rows: CategoryStepsRow[] = [];
  for (const cat of catOrder) {
    const steps = acc.byCategory.get(cat.id);
    if (!steps && cat.order >= 1e6) continue;
    const sev = bySeverity(steps ?? new Map());
    for (const severity of SEVERITIES_DESC) rows.push({ generator, category_id: cat.id, category_name: cat.name, severity, flagged_steps: sev[severity] });
  }
  return rows;
}

/** Leaves by category order, then most defects first, then taxonomy order. */
function leafRows(generator: string, acc: GenAcc, nodes: Nodes): LeafRow[] {
  const { categories, leaves } = nodes;
  const seen = [...acc.byLeaf.entries()].map(([id, l]) => ({ node: leaves.get(id)!, l }));
  seen.sort((a, b) => categories.get(a.node.category)!.order - categories.get(b.node.category)!.order || b.l.defects - a.l.defects || a.node.order - b.node.order);
  return seen.map(({ node, l }) => {
    const sev = bySeverity(l.steps);
    const cat = categories.get(node.category)!;
    return {
      generator,
      category_id: cat.id,
      category_name: cat.name,
      leaf_id: node.id,
      leaf_name: node.name,
      defects: l.defects,
      pct_of_defects: acc.defects > 0 ? (100 * l.defects) / acc.defects : 0,
      fatal_defects: l.fatal,
      flagged_steps: l.steps.size,
      steps_fatal: sev.fatal,
      steps_major: sev.major,
      steps_minor: sev.minor,
      steps_neutral: sev.neutral,
    };
  });
}

/** Defects per trace for a right final answer, a wrong one, then unknown. */
function correctnessRows(generator: string, acc: GenAcc): CorrectnessRow[] {
  const rows: CorrectnessRow[] = [];
  for (const key of ['true', 'false', 'null']) {
    const c = acc.correctness.get(key);
    if (!c) continue;
    rows.push({ generator, final_answer_correct: c.value, traces: c.traces, defects: c.defects, fatal_defects: c.fatal, defects_per_trace: c.defects / c.traces, fatal_per_trace: c.fatal / c.traces });
  }
  return rows;
}

export function computeFingerprints(traces: readonly TraceIn[], defects: readonly DefectIn[], o: FingerprintOptions): FingerprintResult {
  const nodes = new Nodes(o.taxonomy);
  const { gens, traceInfo } = addTraces(traces, o);
  const orphanDefects = addDefects(defects, traceInfo, nodes);

  const tables: Fingerprints = { fp_models: [], fp_category_steps: [], fp_leaves: [], fp_correctness: [] };
  // After the defects: unknown categories they brought in sort last.
  const catOrder = [...nodes.categories.values()].sort((a, b) => a.order - b.order);
  for (const [generator, acc] of [...gens.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
    tables.fp_models.push(modelRow(generator, acc));
    tables.fp_category_steps.push(...categoryRows(generator, acc, catOrder));
    tables.fp_leaves.push(...leafRows(generator, acc, nodes));
    tables.fp_correctness.push(...correctnessRows(generator, acc));
  }
  return { tables, unknownLeaves: nodes.unknownLeaves, orphanDefects };
}
