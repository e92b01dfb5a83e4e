import { describe, expect, it } from 'vitest';
import type { Impact } from '../../schemas/defect.js';
import { DEFAULT_SCORE_OPTIONS, scoreSystems } from '../../src/eval/score.js';
import type { BenchmarkName, StepGold, StepPrediction } from '../../src/eval/types.js';
import { createRng } from '../../src/util/prng.js';
import { close, gold, prediction } from './helpers.js';

/**
 * Scorer equivalence. Each official rule is transcribed below as literally as the README states
 * it (and as the benchmarks' own arithmetic does it: lists, loops, numpy-style NaN), on purpose
 * without sharing any code with src/eval. The same predictions go through our full path (gold
 * from trace records, predictions from defects, scoreSystems) and both must agree to 1e-9.
 */

function protocol(benchmark: BenchmarkName, golds: StepGold[], preds: StepPrediction[]) {
  const [s] = scoreSystems(benchmark, golds, [{ name: 'x', kind: 'final', predictions: new Map(preds.map((p) => [p.record_id, p])) }], { ...DEFAULT_SCORE_OPTIONS, resamples: 20 });
  return Object.fromEntries(Object.entries(s!.protocol.metrics).map(([k, v]) => [k, v.value]));
}

// ---------------------------------------------------------------- ProcessBench

type PbCase = { split: string; label: number; pred: number | 'unparseable' };

/** ProcessBench: per split, accuracies in percent; an empty mean is NaN and 0/0 is NaN (numpy). */
function officialProcessBench(cases: PbCase[]): { average: number; f1: Record<string, number> } {
  const mean = (xs: number[]) => (xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length);
  const f1: Record<string, number> = {};
  const splits: string[] = [];
  for (const c of cases) if (!splits.includes(c.split)) splits.push(c.split);
  for (const sp of splits) {
    const data = cases.filter((c) => c.split === sp);
    const erroneous = data.filter((c) => c.label !== -1);
    const correct = data.filter((c) => c.label === -1);
    const accErr = mean(erroneous.map((c) => (c.pred === c.label ? 100 : 0)));
    const accCor = mean(correct.map((c) => (c.pred === -1 ? 100 : 0)));
    f1[sp] = (2 * accErr * accCor) / (accErr + accCor);
  }
  return { average: mean(splits.map((s) => f1[s]!)), f1 };
}

/** The same cases as records and predictions: the predicted index is the earliest flagged step. */
function pbInputs(cases: PbCase[], rng = createRng(['pb-extra'])) {
  const golds: StepGold[] = [];
  const preds: StepPrediction[] = [];
  cases.forEach((c, i) => {
    const n = 8;
    const id = `pb/${c.split}/${i}`;
    golds.push(gold(id, n, { first_error_step: c.label >= 0 ? c.label + 1 : null }, 'first_error', { split: c.split }));
    if (c.pred === 'unparseable') return void preds.push(prediction(id, n, null));
    const flags: Record<number, Impact> = {};
    // Noise the official index never sees: neutral findings anywhere, and later findings.
    for (let s = 1; s <= n; s++) if (rng.chance(0.2)) flags[s] = 'neutral';
    if (c.pred >= 0) {
      for (let s = c.pred + 2; s <= n; s++) if (rng.chance(0.3)) flags[s] = rng.pick(['minor', 'major', 'fatal'] as const);
      flags[c.pred + 1] = rng.pick(['minor', 'major', 'fatal'] as const);
    }
    preds.push(prediction(id, n, flags));
  });
  return { golds, preds };
}

function checkPb(cases: PbCase[]) {
  const want = officialProcessBench(cases);
  const { golds, preds } = pbInputs(cases);
  const got = protocol('processbench', golds, preds);
  const scale = (x: number | null) => (x === null ? null : 100 * x);
  expect(close(scale(got.average_f1 ?? null), want.average), `average ${got.average_f1} vs ${want.average}`).toBe(true);
  for (const [sp, f] of Object.entries(want.f1)) expect(close(scale(got[`f1:${sp}`] ?? null), f), `${sp}: ${got[`f1:${sp}`]} vs ${f}`).toBe(true);
  return want;
}

describe('ProcessBench protocol equals the official rule', () => {
  it('hand-made cases: exact match, earliest flag, clean answers, unparseable answers', () => {
    const cases: PbCase[] = [
      { split: 'gsm8k', label: -1, pred: -1 },
      { split: 'gsm8k', label: -1, pred: 2 },
      { split: 'gsm8k', label: -1, pred: 'unparseable' },
      { split: 'gsm8k', label: 2, pred: 2 },
      { split: 'gsm8k', label: 0, pred: 1 },
      { split: 'gsm8k', label: 1, pred: 'unparseable' },
      { split: 'gsm8k', label: 3, pred: -1 },
      { split: 'math', label: 4, pred: 4 },
      { split: 'math', label: 5, pred: 4 },
      { split: 'math', label: -1, pred: -1 },
    ];
    const want = checkPb(cases);
    // Known answer: gsm8k acc_err 1/4, acc_cor 1/3 -> F1 2/7; math acc_err 1/2, acc_cor 1 -> 2/3.
    expect(want.f1.gsm8k).toBeCloseTo((200 / 7) * 1, 9);
    expect(want.f1.math).toBeCloseTo(200 / 3, 9);
  });

  it('edge cases: a split without gold errors, no predictions, everything unparseable', () => {
    const noErrors = checkPb([
      { split: 'a', label: -1, pred: -1 },
      { split: 'a', label: -1, pred: 3 },
    ]);
    expect(Number.isNaN(noErrors.average)).toBe(true);
    const nothingFlagged = checkPb([
      { split: 'a', label: 2, pred: -1 },
      { split: 'a', label: -1, pred: -1 },
    ]);
    expect(nothingFlagged.average).toBe(0);
    const allUnparseable = checkPb([
      { split: 'a', label: 2, pred: 'unparseable' },
      { split: 'a', label: -1, pred: 'unparseable' },
    ]);
    expect(Number.isNaN(allUnparseable.average)).toBe(true); // 0 / 0
  });

  it('300 random cases over four splits', () => {
    const rng = createRng(['pb-random']);
    const cases: PbCase[] = Array.from({ length: 300 }, () => {
      const label = rng.chance(0.4) ? -1 : rng.int(0, 7);
      const u = rng.next();
      const pred = u < 0.05 ? 'unparseable' : u < 0.45 ? label : rng.int(-1, 7);
      return { split: rng.pick(['gsm8k', 'math', 'olympiadbench', 'omnimath']), label, pred };
    });
    checkPb(cases);
  });
});

// ---------------------------------------------------------------- PRMBench

type PrmCase = { cls: string; errorSteps: number[]; n: number; labels: boolean[] | null };

/** PRMBench: loop over the judge's labels, correct step = positive; -1 where undefined. */
function officialPrm(cases: PrmCase[]) {
  const zero = () => ({ TP: 0, FP: 0, TN: 0, FN: 0 });
  const total = zero();
  const perClass: Record<string, ReturnType<typeof zero>> = {};
  for (const c of cases) {
    perClass[c.cls] ??= zero();
    if (c.labels === null) continue; // invalid answers are skipped
    const hallucination = c.errorSteps.map((i) => i - 1);
    const m = zero();
    for (let idx = 0; idx < c.labels.length; idx++) {
      if (hallucination.includes(idx)) c.labels[idx] ? m.FP++ : m.TN++;
      else c.labels[idx] ? m.TP++ : m.FN++;
    }
    for (const k of ['TP', 'FP', 'TN', 'FN'] as const) {
      perClass[c.cls]![k] += m[k];
      if (c.cls !== 'correct') total[k] += m[k];
    }
  }
  // The result tables (PRMBench notebook get_prmscore_from_current_res_dict): multi_solutions
  // uses the positive F1 alone, and a score at or below zero is shown as 0.
  const table = (cls: string | null, f1: number, nf1: number) => {
    const raw = cls === 'multi_solutions' ? f1 : (f1 + nf1) / 2;
    return raw > 0 ? raw : 0;
  };
  const score = (x: ReturnType<typeof zero>, cls: string | null) => {
    const p = x.TP + x.FP !== 0 ? x.TP / (x.TP + x.FP) : -1;
    const r = x.TP + x.FN !== 0 ? x.TP / (x.TP + x.FN) : -1;
    const f1 = p + r !== 0 ? (2 * p * r) / (p + r) : -1;
    const np = x.TN + x.FN !== 0 ? x.TN / (x.TN + x.FN) : -1;
    const nr = x.TN + x.FP !== 0 ? x.TN / (x.TN + x.FP) : -1;
    const nf1 = np + nr !== 0 ? (2 * np * nr) / (np + nr) : -1;
    return { f1, nf1, raw: (f1 + nf1) / 2, prm: table(cls, f1, nf1) };
  };
  return { total: score(total, null), perClass: Object.fromEntries(Object.entries(perClass).map(([k, v]) => [k, score(v, k)])) };
}

function checkPrm(cases: PrmCase[]) {
  const want = officialPrm(cases);
  const golds = cases.map((c, i) => {
    const inRange = c.errorSteps.filter((s) => s >= 1 && s <= c.n);
    return gold(`prm/${i}`, c.n, { error_steps: inRange }, 'all_steps', { split: c.cls, classification: c.cls, raw_error_steps: c.errorSteps });
  });
  const preds = cases.map((c, i) => {
    if (c.labels === null) return prediction(`prm/${i}`, c.n, null);
    const flags: Record<number, Impact> = {};
    c.labels.forEach((correct, k) => {
      if (!correct) flags[k + 1] = 'minor';
    });
    return prediction(`prm/${i}`, c.n, flags);
  });
  const got = protocol('prmbench', golds, preds);
  expect(close(got.f1_pos ?? null, want.total.f1), `f1_pos ${got.f1_pos} vs ${want.total.f1}`).toBe(true);
  expect(close(got.f1_neg ?? null, want.total.nf1), `f1_neg ${got.f1_neg} vs ${want.total.nf1}`).toBe(true);
  expect(close(got.prm_score ?? null, want.total.prm)).toBe(true);
  expect(close(got.prm_score_raw ?? null, want.total.raw)).toBe(true);
  for (const [cls, s] of Object.entries(want.perClass)) {
    expect(close(got[`prm_score:${cls}`] ?? null, s.prm), `${cls}: ${got[`prm_score:${cls}`]} vs ${s.prm}`).toBe(true);
    expect(close(got[`f1_pos:${cls}`] ?? null, s.f1) && close(got[`f1_neg:${cls}`] ?? null, s.nf1), `${cls} F1s`).toBe(true);
  }
  return want;
}

describe('PRMBench protocol equals the official rule', () => {
  it('hand-made cases: refs past the trace, an invalid answer, the clean companion kept out of the pool', () => {
    const want = checkPrm([
      { cls: 'circular', n: 5, errorSteps: [3, 4, 7], labels: [true, true, false, true, false] },
      { cls: 'circular', n: 4, errorSteps: [2], labels: [true, false, true, false] },
      { cls: 'redundency', n: 3, errorSteps: [3], labels: null },
      { cls: 'correct', n: 4, errorSteps: [], labels: [true, false, true, true] },
      { cls: 'multi_solutions', n: 3, errorSteps: [], labels: [true, true, true] },
    ]);
    // Known answer for the pool: TP 7, FN 2, FP 1, TN 2 (step 7 of the first case is never visited).
    const p = 7 / 8, r = 7 / 9, np = 2 / 4, nr = 2 / 3;
    expect(want.total.raw).toBeCloseTo(((2 * p * r) / (p + r) + (2 * np * nr) / (np + nr)) / 2, 12);
  });

  it('edge cases: no gold errors at all, no flagged step, every step flagged', () => {
    const clean = checkPrm([{ cls: 'multi_solutions', n: 4, errorSteps: [], labels: [true, true, true, true] }]);
    expect(clean.total.nf1).toBe(-1); // the official sentinel for an undefined F1
    // No erroneous step: the table scores multi_solutions by its positive F1 alone (1 here), not (1 + -1) / 2 = 0.
    expect(clean.perClass.multi_solutions!.prm).toBe(1);
    // Every correct step flagged: both F1s undefined or 0, a raw score at or below zero, shown as 0.
    const flagged = checkPrm([{ cls: 'confidence', n: 3, errorSteps: [2], labels: [false, true, false] }]);
    expect(flagged.perClass.confidence!.raw).toBeLessThanOrEqual(0);
    expect(flagged.perClass.confidence!.prm).toBe(0);
    checkPrm([{ cls: 'confidence', n: 4, errorSteps: [2], labels: [true, true, true, true] }]);
    checkPrm([{ cls: 'confidence', n: 4, errorSteps: [2], labels: [false, false, false, false] }]);
    checkPrm([{ cls: 'confidence', n: 4, errorSteps: [9], labels: null }]);
  });

  it('400 random cases over the classes', () => {
    const rng = createRng(['prm-random']);
    const cases: PrmCase[] = Array.from({ length: 400 }, () => {
      const n = rng.int(2, 12);
      const cls = rng.pick(['circular', 'confidence', 'deception', 'redundency', 'correct', 'multi_solutions']);
      const errorSteps = cls === 'correct' || cls === 'multi_solutions' ? [] : Array.from({ length: rng.int(1, 3) }, () => rng.int(1, n + 2));
      const labels = rng.chance(0.05) ? null : Array.from({ length: n }, (_, k) => (errorSteps.includes(k + 1) ? rng.chance(0.4) : rng.chance(0.85)));
      return { cls, n, errorSteps: [...new Set(errorSteps)], labels };
    });
    checkPrm(cases);
  });
});

// ---------------------------------------------------------------- DeltaBench

type DeltaCase = { n: number; gold: number[]; pred: number[] | 'unparseable' };

/**
 * DeltaBench: per sample with gold sections, drop predictions above the last gold section
 * (unless unfiltered), set arithmetic, 0 when undefined. A sample without an answer has no
 * metrics, and a sample without gold sections cannot be scored; both are missing values that
 * the means and sums skip.
 */
function officialDelta(cases: DeltaCase[], filtered: boolean) {
  const rows: Array<{ p: number; r: number; f: number; tp: number; fp: number; fn: number }> = [];
  for (const c of cases) {
    if (c.pred === 'unparseable' || c.gold.length === 0) continue;
    const maxGold = Math.max(...c.gold);
    const predicted = filtered ? c.pred.filter((x) => x <= maxGold) : c.pred;
    const g = new Set(c.gold);
    const p = new Set(predicted);
    const tp = [...p].filter((x) => g.has(x)).length;
    const fp = [...p].filter((x) => !g.has(x)).length;
    const fn = [...g].filter((x) => !p.has(x)).length;
    const precision = tp + fp > 0 ? tp / (tp + fp) : 0;
    const recall = tp + fn > 0 ? tp / (tp + fn) : 0;
    const f = precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0;
    rows.push({ p: precision, r: recall, f, tp, fp, fn });
  }
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
  const TP = rows.reduce((a, r) => a + r.tp, 0), FP = rows.reduce((a, r) => a + r.fp, 0), FN = rows.reduce((a, r) => a + r.fn, 0);
  const mp = TP + FP > 0 ? TP / (TP + FP) : 0;
  const mr = TP + FN > 0 ? TP / (TP + FN) : 0;
  return { macro_precision: mean(rows.map((r) => r.p)), macro_recall: mean(rows.map((r) => r.r)), macro_f1: mean(rows.map((r) => r.f)), micro_precision: mp, micro_recall: mr, micro_f1: mp + mr > 0 ? (2 * mp * mr) / (mp + mr) : 0 };
}

function checkDelta(cases: DeltaCase[]) {
  const golds = cases.map((c, i) => gold(`delta/${i}`, c.n, { error_steps: c.gold.filter((s) => s <= c.n) }, 'all_steps', { raw_error_steps: c.gold }));
  const preds = cases.map((c, i) => prediction(`delta/${i}`, c.n, c.pred === 'unparseable' ? null : Object.fromEntries(c.pred.map((s) => [s, 'major' as Impact]))));
  const got = protocol('deltabench', golds, preds);
  const filtered = officialDelta(cases, true);
  const unfiltered = officialDelta(cases, false);
  for (const [k, v] of Object.entries(filtered)) expect(close(got[k] ?? null, v), `${k}: ${got[k]} vs ${v}`).toBe(true);
  for (const [k, v] of Object.entries(unfiltered)) expect(close(got[`unfiltered_${k}`] ?? null, v), `unfiltered_${k}`).toBe(true);
  return { filtered, unfiltered };
}

describe('DeltaBench protocol equals the official rule', () => {
  it('hand-made cases: predictions past the last gold section, no predictions, no gold, unparseable', () => {
    const r = checkDelta([
      { n: 10, gold: [3, 5], pred: [3, 8, 9] }, // 8, 9 past the last gold section: dropped
      { n: 6, gold: [2], pred: [] }, // nothing predicted: P = R = F1 = 0, still counted
      { n: 6, gold: [], pred: [1, 2] }, // no gold sections: not scored
      { n: 6, gold: [4], pred: 'unparseable' }, // no answer: missing
      { n: 8, gold: [1, 2, 6], pred: [2, 4, 6, 7] },
    ]);
    // Known answers (filtered), by hand: s1 keeps {3}: P 1, R 1/2 -> F1 2/3; s2: 0; s5 keeps
    // {2,4,6}: P 2/3, R 2/3 -> 2/3. Macro F1 = (2/3 + 0 + 2/3) / 3 = 4/9.
    expect(r.filtered.macro_f1).toBeCloseTo(4 / 9, 12);
    expect(r.unfiltered.macro_f1).toBeLessThan(r.filtered.macro_f1); // false alarms past the last gold now cost
  });

  it('edge cases: nothing scorable, every answer unparseable', () => {
    const none = checkDelta([{ n: 4, gold: [], pred: [1] }]);
    expect(Number.isNaN(none.filtered.macro_f1)).toBe(true);
    checkDelta([
      { n: 4, gold: [2], pred: 'unparseable' },
      { n: 4, gold: [1, 3], pred: 'unparseable' },
    ]);
  });

  it('300 random cases', () => {
    const rng = createRng(['delta-random']);
    checkDelta(
      Array.from({ length: 300 }, () => {
        const n = rng.int(3, 30);
        const g = [...new Set(Array.from({ length: rng.int(0, 4) }, () => rng.int(1, n)))];
        const p = rng.chance(0.05) ? ('unparseable' as const) : [...new Set(Array.from({ length: rng.int(0, 6) }, () => rng.int(1, n)))];
        return { n, gold: g, pred: p };
      }),
    );
  });
});
