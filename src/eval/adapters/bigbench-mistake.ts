import { z } from 'zod';
import type { TraceRecord } from '../../../schemas/trace.js';
import type { LoadedBenchmark } from '../types.js';
import { benchmarkFiles, readJsonRows, stem } from './files.js';

const MistakeItem = z.object({
  input: z.string(),
  steps: z.array(z.string()),
  answer: z.string().nullable().optional(),
  target: z.string().nullable().optional(),
  mistake_index: z.int().min(0).nullable(),
});

/**
 * BIG-Bench Mistake: one JSONL file per task; `mistake_index` is the 0-based first mistake or
 * null. Only the first mistake is labelled, so steps after it are unlabelled. Records have no
 * native id: "<task>/<line>".
 */
export function loadBigBenchMistake(path: string): LoadedBenchmark {
  const records: TraceRecord[] = [];
  const skipped: LoadedBenchmark['skipped'] = [];
  for (const file of benchmarkFiles(path, ['.jsonl'])) {
    const task = stem(file);
    for (const { at, row, error } of readJsonRows(file)) {
      const p = error ? null : MistakeItem.safeParse(row);
      if (!p?.success) {
        skipped.push({ source: `${task}:${at}`, reason: error ?? z.prettifyError(p!.error).replace(/\s+/g, ' ') });
        continue;
      }
      const it = p.data;
      if (it.steps.length === 0 || (it.mistake_index !== null && it.mistake_index >= it.steps.length)) {
        skipped.push({ source: `${task}:${at}`, reason: it.steps.length === 0 ? 'no steps' : `mistake_index ${it.mistake_index} is past the last step` });
        continue;
      }
      records.push({
        id: `bigbench-mistake/${task}/${at}`,
        problem: it.input,
        steps: it.steps,
        ...(it.answer ? { final_solution: it.answer } : {}),
        meta: { benchmark: 'bigbench-mistake', split: task, target: it.target ?? null, answer: it.answer ?? null, human_labelled: task !== 'dyck_languages' },
        gold: { first_error_step: it.mistake_index === null ? null : it.mistake_index + 1 },
      });
    }
  }
  return { benchmark: 'bigbench-mistake', scope: 'first_error', records, skipped };
}
