/**
 * Table 14 of the paper: accuracy of the whole corpus before repair and after replacing the
 * answers of the records a gate retried by their retries; records the gate did not retry (and
 * records whose retry failed for good) keep their original answers. Intervals are percentile
 * bootstraps (../metrics/bootstrap.ts) that resample problems, each with all its records, since
 * traces of one problem are not independent.
 */
import type { RepairCondition } from '../../../schemas/repair.js';
import { type Aggregator, type BootstrapOptions, bootstrapMany } from '../metrics/bootstrap.js';
import type { Estimate } from '../metrics/paired.js';
import { cells, type RepairOutcome } from './outcomes.js';

/** A corpus record as originally answered; `problem_id` defaults to the record id. */
export interface OriginalRecord {
  record_id: string;
  problem_id?: string;
  /** original answer right; null without a reference answer */
  correct: boolean | null;
}

export interface GateAccuracy {
  gate: string;
  condition: RepairCondition;
  /** corpus records (with a reference) whose answer the retry replaced */
  retried: number;
  retried_share: number;
  after: Estimate;
  /** after − before, on the same resamples */
  delta: Estimate;
}

export interface CorpusAccuracy {
  /** corpus records with a reference answer (the denominator) */
  records: number;
  problems: number;
  /** corpus records without a reference: left out */
  no_reference: number;
  /** records whose original correctness in the originals differs from the repairs rows' (the rows' is used) */
  conflicts: number;
  before: Estimate;
  gates: GateAccuracy[];
}

interface CorpusEntry {
  problem_id: string;
  correct: boolean;
}

function corpusOf(originals: readonly OriginalRecord[], outcomes: readonly RepairOutcome[]): { corpus: Map<string, CorpusEntry>; noRef: number; conflicts: number } {
  const all = new Map<string, { problem_id: string; correct: boolean | null }>();
  for (const o of originals) all.set(o.record_id, { problem_id: o.problem_id ?? o.record_id, correct: o.correct });
  const conflicted = new Set<string>();
  for (const o of outcomes) {
    const had = all.get(o.record_id);
    if (had && had.correct !== null && o.before !== null && had.correct !== o.before) conflicted.add(o.record_id);
    all.set(o.record_id, { problem_id: o.problem_id, correct: o.before ?? had?.correct ?? null });
  }
  const corpus = new Map<string, CorpusEntry>();
  let noRef = 0;
  for (const [id, e] of all) {
    if (e.correct === null) noRef++;
    else corpus.set(id, { problem_id: e.problem_id, correct: e.correct });
  }
  return { corpus, noRef, conflicts: conflicted.size };
}

const KEYS = ['before', 'after', 'delta'] as const;

/** Pooled before/after accuracy over problem units: Σ w·k / Σ w·n. */
function unitAggregator(n: Float64Array, before: Float64Array, after: Float64Array): Aggregator<(typeof KEYS)[number]> {
  return {
    n: n.length,
    keys: KEYS,
    compute(w) {
      let nn = 0, b = 0, a = 0;
      for (let i = 0; i < n.length; i++) {
        const wi = w === null ? 1 : w[i]!;
        nn += wi * n[i]!;
        b += wi * before[i]!;
        a += wi * after[i]!;
      }
      return nn === 0 ? { before: NaN, after: NaN, delta: NaN } : { before: b / nn, after: a / nn, delta: (a - b) / nn };
    },
  };
}

/** Corpus accuracy before repair and under each gate and condition found in the outcomes. */
export function corpusAccuracy(originals: readonly OriginalRecord[], outcomes: readonly RepairOutcome[], opts: BootstrapOptions = {}): CorpusAccuracy {
  const { corpus, noRef, conflicts } = corpusOf(originals, outcomes);
  const units = [...new Set([...corpus.values()].map((e) => e.problem_id))].sort();
  const unit = new Map(units.map((u, i) => [u, i] as const));
  const n = new Float64Array(units.length);
  const before = new Float64Array(units.length);
  for (const e of corpus.values()) {
    n[unit.get(e.problem_id)!]! += 1;
    if (e.correct) before[unit.get(e.problem_id)!]! += 1;
  }
  const table = cells(outcomes).map((c) => {
    const after = Float64Array.from(before);
    let retried = 0;
    for (const o of outcomes) {
      const e = corpus.get(o.record_id);
      if (o.gate !== c.gate || o.condition !== c.condition || !e || o.after === null) continue;
      retried++;
      after[unit.get(e.problem_id)!]! += Number(o.after) - Number(e.correct);
    }
    return { ...c, retried, agg: unitAggregator(n, before, after) };
  });
  const base = unitAggregator(n, before, before);
  const cis = bootstrapMany([base, ...table.map((t) => t.agg)] as Aggregator<string>[], opts);
  const est = (agg: Aggregator<string>, ci: Record<string, { lo: number; hi: number }>, k: string): Estimate => {
    const value = agg.compute(null)[k]!;
    // An empty corpus has no estimate and no interval (bootstrapMany draws nothing from no units).
    return Number.isFinite(value) ? { value, lo: ci[k]!.lo, hi: ci[k]!.hi } : { value: NaN, lo: NaN, hi: NaN };
  };
  return {
    records: corpus.size,
    problems: units.length,
    no_reference: noRef,
    conflicts,
    before: est(base, cis[0]!, 'before'),
    gates: table.map((t, i) => ({
      gate: t.gate,
      condition: t.condition,
      retried: t.retried,
      retried_share: corpus.size === 0 ? NaN : t.retried / corpus.size,
      after: est(t.agg, cis[i + 1]!, 'after'),
      delta: est(t.agg, cis[i + 1]!, 'delta'),
    })),
  };
}
