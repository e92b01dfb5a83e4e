import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { IMPACTS, type Impact } from '../../schemas/defect.js';
import { loadBenchmark } from '../../src/eval/adapters/index.js';
import { MISSING_DATA_MESSAGE, sharedDataDir } from '../../src/eval/data.js';
import { goldOf } from '../../src/eval/gold.js';
import { DEFAULT_SCORE_OPTIONS, matchRecords, scoreSystems } from '../../src/eval/score.js';
import type { BenchmarkName, LoadedBenchmark, StepGold, StepPrediction } from '../../src/eval/types.js';
import { createRng, type Rng } from '../../src/util/prng.js';
import { pyenvPython } from '../helpers/run-setup.js';

/**
 * Acceptance (issue 15): the same predictions go through our scoring path (adapter -> gold ->
 * matchRecords -> scoreSystems) and through test/py/official_scorers.py, an independent
 * transcription of each benchmark's official scorer cited by file and line; every number
 * agrees within 1e-9. Predictions are random but seeded, and include the cases the scorers
 * treat specially: failed verdicts, selected records without any verdict (counted as wrong),
 * findings below the threshold, and records without gold.
 */
const python = pyenvPython();
const dir = sharedDataDir();
const SCRIPT = join(process.cwd(), 'test/py/official_scorers.py');
const FLAGGING: Impact[] = IMPACTS.filter((i) => i !== 'neutral');

function official(req: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(execFileSync(python!, [SCRIPT], { input: JSON.stringify(req), encoding: 'utf8', maxBuffer: 64 << 20 })) as Record<string, unknown>;
}

type Kind = 'ok' | 'failed' | 'missing';

/** A seeded judge: flags each step at `flagRate` (a neutral finding sometimes, which flags nothing); some verdicts fail or never come. */
function judge(golds: readonly StepGold[], rng: Rng, flagRate = 0.3): { kinds: Map<string, Kind>; preds: Map<string, StepPrediction> } {
  const kinds = new Map<string, Kind>();
  const preds = new Map<string, StepPrediction>();
  for (const g of golds) {
    const u = rng.next();
    const kind: Kind = u < 0.04 ? 'missing' : u < 0.08 ? 'failed' : 'ok';
    kinds.set(g.record_id, kind);
    if (kind === 'missing') continue;
    const impacts = new Map<number, Impact>();
    if (kind === 'ok') {
      const errors = new Set(g.error_steps);
      for (let s = 1; s <= g.n_steps; s++) {
        // Leaning towards the gold, so the numbers are not all near chance.
        const p = errors.has(s) ? 0.6 : flagRate;
        if (rng.chance(p)) impacts.set(s, rng.pick(FLAGGING));
        else if (rng.chance(0.1)) impacts.set(s, 'neutral');
      }
    }
    preds.set(g.record_id, { record_id: g.record_id, n_steps: g.n_steps, failed: kind === 'failed', impacts });
  }
  return { kinds, preds };
}

const flagged = (p: StepPrediction | undefined): number[] => [...(p?.impacts ?? new Map<number, Impact>())].filter(([, i]) => i !== 'neutral').map(([s]) => s).sort((a, b) => a - b);

function ours(benchmark: BenchmarkName, loaded: LoadedBenchmark, preds: Map<string, StepPrediction>): Record<string, number | null> {
  const golds = loaded.records.map((r) => goldOf(r, loaded.scope));
  const matched = matchRecords(golds, preds, 'wrong');
  const [s] = scoreSystems(benchmark, matched.golds, [{ name: 'judge', kind: 'final', predictions: preds }], { ...DEFAULT_SCORE_OPTIONS, resamples: 1 }, matched.reasons);
  return Object.fromEntries(Object.entries(s!.protocol.metrics).map(([k, v]) => [k, v.value]));
}

/** Every official number has our counterpart within 1e-9 (null = undefined on both sides). */
function expectSame(got: Record<string, number | null>, want: Record<string, unknown>, scale = 1): number {
  let compared = 0;
  for (const [k, w] of Object.entries(want)) {
    if (k.startsWith('_')) continue;
    expect(k in got, `our scorer has no "${k}"`).toBe(true);
    const g = got[k] ?? null;
    if (w === null) expect(g, k).toBeNull();
    else {
      expect(g, k).not.toBeNull();
      expect(Math.abs(g! * scale - (w as number)), `${k}: ours ${g! * scale} vs official ${w as number}`).toBeLessThanOrEqual(1e-9);
    }
    compared++;
  }
  return compared;
}

describe.skipIf(!python || !dir)(`official scorers on the same predictions${dir ? '' : ` (skipped: ${MISSING_DATA_MESSAGE})`}`, () => {
  it('ProcessBench (code/run_eval.py), all four splits of the real files', () => {
    const loaded = loadBenchmark('processbench', join(dir!, 'processbench'));
    const golds = loaded.records.map((r) => goldOf(r, loaded.scope));
    const { kinds, preds } = judge(golds, createRng(['official-pb']), 0.08);
    const samples = golds.map((g) => {
      const first = flagged(preds.get(g.record_id))[0];
      const kind = kinds.get(g.record_id);
      // The answer the judge gave: the earliest flagged step (0-based), -1 for none; no verdict = no parseable answer.
      return { split: g.split, label: g.first_error === null ? -1 : g.first_error - 1, prediction: kind === 'ok' ? (first === undefined ? -1 : first - 1) : null };
    });
    const want = official({ benchmark: 'processbench', samples });
    const got = ours('processbench', loaded, preds);
    expect(expectSame(got, want, 100)).toBe(1 + 4 * 3);
    expect(want['f1:gsm8k']).toBeGreaterThan(0);
  });

  it('PRMBench (prmtest_classified/task.py + the table notebook), every class of the real files', () => {
    const data = join(dir!, 'prmbench');
    const loaded = loadBenchmark('prmbench', data);
    const golds = loaded.records.map((r) => goldOf(r, loaded.scope));
    const { kinds, preds } = judge(golds, createRng(['official-prm']));
    const results = golds.map((g) => {
      const kind = kinds.get(g.record_id)!;
      const idx = g.record_id.replace(/^prmbench\//, '');
      const raw = new Set(g.raw_error_steps);
      // No verdict is scored as wrong: every step judged the other way round from the gold.
      if (kind === 'missing') return { idx, validity: true, labels: Array.from({ length: g.n_steps }, (_, i) => raw.has(i + 1)) };
      const f = new Set(flagged(preds.get(g.record_id)));
      return { idx, validity: kind === 'ok', labels: Array.from({ length: g.n_steps }, (_, i) => !f.has(i + 1)) };
    });
    const want = official({ benchmark: 'prmbench', data_dir: data, results });
    expect(want._samples).toBe(loaded.records.length);
    const classes = want._classes as string[];
    expect(classes).toContain('multi_solutions');
    expect(classes).toContain('correct');
    const got = ours('prmbench', loaded, preds);
    // Overall (4) + three per class + the three table groups.
    expect(expectSame(got, want)).toBe(4 + 3 * classes.length + 3);
    // multi_solutions has no erroneous step: its negative F1 is the sentinel, and its table score is the positive F1.
    expect(want['f1_neg:multi_solutions']).toBeLessThanOrEqual(0);
    expect(got['prm_score:multi_solutions']).toBeCloseTo(want['f1_pos:multi_solutions'] as number, 12);
  });

  it('PRMBench: a judge that calls every step wrong gets a PRMScore at or below zero, shown as 0', () => {
    const data = join(dir!, 'prmbench');
    const loaded = loadBenchmark('prmbench', data);
    const golds = loaded.records.map((r) => goldOf(r, loaded.scope));
    const all = new Map(golds.map((g) => [g.record_id, { record_id: g.record_id, n_steps: g.n_steps, failed: false, impacts: new Map(Array.from({ length: g.n_steps }, (_, i) => [i + 1, 'major' as Impact])) }]));
    const results = golds.map((g) => ({ idx: g.record_id.replace(/^prmbench\//, ''), validity: true, labels: Array.from({ length: g.n_steps }, () => false) }));
    const want = official({ benchmark: 'prmbench', data_dir: data, results });
    expect(want['prm_score:multi_solutions']).toBe(0);
    const got = ours('prmbench', loaded, all);
    expectSame(got, want);
    expect(got['prm_score:multi_solutions']).toBe(0);
  });

  describe('DeltaBench (evaluation.py) on a fixture in the released format', () => {
    // DeltaBench is not in the shared data (no licence): a fixture shaped like the released
    // Deltabench_v1.jsonl as the official evaluator reads it — the trace in one string field
    // `sections_content` with "section<k>:" headers, the two gold number lists, `task_l1`.
    const tmp = mkdtempSync(join(tmpdir(), 'rj-delta-'));
    afterAll(() => rmSync(tmp, { recursive: true, force: true }));
    const TASKS = ['math', 'code', 'Physics&Chemistry&Biology', 'general'];
    const rng = createRng(['official-delta-data']);
    const rows = Array.from({ length: 160 }, (_, i) => {
      const n = rng.int(3, 14);
      const pick = (p: number) => Array.from({ length: n }, (_, k) => k + 1).filter(() => rng.chance(p));
      const noGold = i % 37 === 5;
      return {
        question: `question ${i}`,
        sections_content: Array.from({ length: n }, (_, k) => `section${k + 1}:\nWork of part ${k + 1} for item ${i}.\nMore lines.`).join('\n\n'),
        reason_error_section_numbers: noGold ? [] : pick(0.2),
        reason_unuseful_section_numbers: noGold ? [] : pick(0.1),
        task_l1: TASKS[i % TASKS.length]!,
      };
    });
    const file = join(tmp, 'Deltabench_v1.jsonl');
    writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');

    it('per-task rows and overall equal the official numbers', () => {
      const loaded = loadBenchmark('deltabench', file);
      expect(loaded.records).toHaveLength(rows.length);
      const golds = loaded.records.map((r) => goldOf(r, loaded.scope));
      const { kinds, preds } = judge(golds, createRng(['official-delta']));
      const critics = golds.map((g) => {
        const kind = kinds.get(g.record_id);
        if (kind === 'failed') return ''; // an empty critique
        const f = kind === 'missing' ? [] : flagged(preds.get(g.record_id));
        return f.length === 0 ? 'Conclusion: no error' : `Conclusion: yes\n${f.map((s) => `Error Section Number: ${s}\nExplanation: section ${s} is wrong.`).join('\n')}`;
      });
      const want = official({ benchmark: 'deltabench', data_file: file, critics });
      expect(want._tasks).toEqual([...TASKS].sort());
      const got = ours('deltabench', loaded, preds);
      expect(expectSame(got, want)).toBe(6 + 6 * TASKS.length);
      expect(want['macro_f1:code']).toBeGreaterThan(0);
    });

    it('the array form loads to the same records and gold', () => {
      const arrays = join(tmp, 'arrays.json');
      const sections = (text: string) => text.split(/\n\n(?=section\d+:)/).map((s) => ({ content: s.replace(/^section\d+:\n/, '') }));
      writeFileSync(arrays, JSON.stringify(rows.map(({ sections_content, ...r }) => ({ ...r, sections: sections(sections_content) }))));
      const a = loadBenchmark('deltabench', file);
      const b = loadBenchmark('deltabench', arrays);
      expect(b.records.map((r) => [r.steps, r.gold, r.meta.split])).toEqual(a.records.map((r) => [r.steps, r.gold, r.meta.split]));
      expect(a.records[0]!.steps![0]).toBe('Work of part 1 for item 0.\nMore lines.');
    });
  });
});
