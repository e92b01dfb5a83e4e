import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Impact } from '../../schemas/defect.js';
import { pairedLadder } from '../../src/eval/paired-ladder.js';
import { firstVerdicts, predictionFromDefects } from '../../src/eval/predictions.js';
import { pairedTable, renderMarkdown } from '../../src/eval/report.js';
import { evaluate } from '../../src/eval/harness.js';
import { DEFAULT_SCORE_OPTIONS, matchRecords, scoreSystems } from '../../src/eval/score.js';
import type { StepPrediction } from '../../src/eval/types.js';
import { readVerdictSource } from '../../src/eval/verdicts-io.js';
import type { System } from '../../src/eval/ladder.js';
import { createRng } from '../../src/util/prng.js';
import { defect, gold, prediction, record } from './helpers.js';

const OPTS = { ...DEFAULT_SCORE_OPTIONS, resamples: 200 };

describe('selected records without a verdict (issue 15, point 8)', () => {
  // Three clean records judged right and one erroneous record with no verdict at all.
  const golds = [1, 2, 3].map((i) => gold(`r${i}`, 3, { first_error_step: null }, 'first_error', { split: 's' })).concat(gold('r4', 3, { first_error_step: 2 }, 'first_error', { split: 's' }));
  const preds = new Map<string, StepPrediction>([1, 2, 3].map((i) => [`r${i}`, prediction(`r${i}`, 3, {})]));

  it('count as wrong answers by default, and every reason is counted', () => {
    const m = matchRecords(golds, new Map([...preds, ['r3', prediction('r3', 5, {})]]), 'wrong', new Set(['r4']));
    expect(m.missing_by_reason).toEqual({ no_verdict: 0, unreadable: 1, step_count: 1 });
    expect(m.golds).toHaveLength(4);
    const [s] = scoreSystems('processbench', m.golds, [{ name: 'x', kind: 'final', predictions: preds }], OPTS, m.reasons);
    // ProcessBench: r4's answer is wrong, so acc_err = 0/1 and F1 = 0 (not undefined, as leaving it out would give).
    expect(s!.protocol.metrics['acc_err:s']!.value).toBe(0);
    expect(s!.protocol.metrics['f1:s']!.value).toBe(0);
    // Step level: r4's labelled steps (1 correct, 2 erroneous) are both misclassified.
    expect(s!.confusion).toEqual({ tp: 0, fp: 1, tn: 9, fn: 1 });
    expect(s!.records.missing).toBe(1);
  });

  it('--missing exclude leaves them out', () => {
    const m = matchRecords(golds, preds, 'exclude');
    expect(m.golds.map((g) => g.record_id)).toEqual(['r1', 'r2', 'r3']);
    expect(m.missing_by_reason.no_verdict).toBe(1);
  });

  it('the report says how many and why, and what was done with them', async () => {
    const recs = [1, 2, 3].map((i) => record(`r${i}`, 3, { first_error_step: null }, { split: 's' })).concat(record('r4', 3, { first_error_step: 2 }, { split: 's' }));
    const loaded = { benchmark: 'processbench' as const, scope: 'first_error' as const, records: recs, skipped: [] };
    const { report } = await evaluate({ loaded, dataPath: 'x', selected: recs, predictions: preds, score: OPTS });
    expect(report.records).toMatchObject({ selected: 4, scored: 4, missing: 1, missing_by_reason: { no_verdict: 1, unreadable: 0, step_count: 0 } });
    expect(report.notes.join('\n')).toContain('1 selected records have no usable verdict (1 never judged): scored as wrong answers');
    expect(renderMarkdown(report)).toContain('1 without a usable verdict (scored as wrong)');
  });
});

describe('defects citing only nonexistent steps, repeated verdicts, unreadable lines', () => {
  it('a stray defect flags nothing but is counted, never silently "no error"', () => {
    const p = predictionFromDefects('r', 3, [defect([7, 9]), defect([0 + 4], 'neutral'), defect([2, 8])], false);
    expect([...p.impacts.keys()]).toEqual([2]);
    expect(p.stray_defects).toBe(1);
    const g = [gold('r', 3, { error_steps: [2] }, 'all_steps')];
    const [s] = scoreSystems('prmbench', g, [{ name: 'x', kind: 'final', predictions: new Map([['r', p]]) }], OPTS);
    expect(s!.records.stray_defects).toBe(1);
  });

  it('two verdicts for one record: the first one read is kept', () => {
    const out = firstVerdicts([{ record_id: 'a', n: 1 }, { record_id: 'b', n: 2 }, { record_id: 'a', n: 3 }]);
    expect(out.verdicts).toEqual([{ record_id: 'a', n: 1 }, { record_id: 'b', n: 2 }]);
    expect(out).toMatchObject({ duplicates: 1, first_duplicate: 'a' });
  });

  it('an unreadable verdict line still names its record when it can', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'rj-unreadable-'));
    try {
      const f = join(tmp, 'v.jsonl');
      writeFileSync(f, ['{"record_id": "cut/1", "n_steps": 3, "defe', '{"record_id": "bad/2", "n_steps": "x"}', 'garbage'].join('\n') + '\n');
      const src = await readVerdictSource(f);
      expect(src.kind === 'jsonl' && src.invalid.map((i) => i.record_id ?? null)).toEqual(['cut/1', 'bad/2', null]);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe('paired bootstrap of the Balanced F1 difference between ladder systems', () => {
  const rng = createRng(['paired-ladder']);
  const golds = Array.from({ length: 300 }, (_, i) => gold(`r${i}`, 6, { error_steps: [1 + (i % 6)] }, 'all_steps'));
  const system = (name: string, hit: number, fa: number): System => {
    const predictions = new Map<string, StepPrediction>();
    for (const g of golds) {
      const flags: Record<number, Impact> = {};
      for (let s = 1; s <= 6; s++) if (rng.chance(g.error_steps.includes(s) ? hit : fa)) flags[s] = 'major';
      predictions.set(g.record_id, prediction(g.record_id, 6, flags));
    }
    return { name, kind: 'solo', predictions, usage: new Map() };
  };
  const strong = system('strong', 0.9, 0.05);
  const weak = system('weak', 0.4, 0.3);

  it('a system against itself differs by exactly 0; the order of a pair flips the sign', () => {
    const rows = pairedLadder(golds, [strong, { ...strong, name: 'copy' }, weak], OPTS);
    expect(rows.map((r) => [r.a, r.b])).toEqual([['strong', 'copy'], ['strong', 'weak'], ['copy', 'weak']]);
    expect(rows[0]).toMatchObject({ diff: 0, lo: 0, hi: 0 });
    const back = pairedLadder(golds, [weak, strong], OPTS)[0]!;
    expect(back.diff).toBeCloseTo(-rows[1]!.diff!, 12);
    expect(back.lo).toBeCloseTo(-rows[1]!.hi!, 12);
  });

  it('the difference equals the two point estimates apart, and a clearly better system excludes 0', () => {
    const [s, w] = scoreSystems('prmbench', golds, [strong, weak], OPTS);
    const row = pairedLadder(golds, [strong, weak], OPTS)[0]!;
    expect(row.diff).toBeCloseTo(s!.step.balanced_f1.value! - w!.step.balanced_f1.value!, 12);
    expect(row.lo! > 0 && row.lo! <= row.diff! && row.diff! <= row.hi!).toBe(true);
    // The report's table: the pair, the signed difference in points, and the verdict on 0.
    const md = pairedTable([row, pairedLadder(golds, [strong, { ...strong, name: 'copy' }], OPTS)[0]!]);
    expect(md).toMatch(new RegExp(`strong \\| weak +\\| \\+${(100 * row.diff!).toFixed(1)} .*\\| yes`));
    expect(md).toMatch(/strong \| copy +\| 0\.0 \[0\.0, 0\.0\] +\| no/);
  });
});
