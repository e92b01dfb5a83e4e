import { z } from 'zod';
import type { TraceRecord } from '../../../schemas/trace.js';
import type { LoadedBenchmark } from '../types.js';
import { benchmarkFiles, readJsonRows, stem } from './files.js';

const nums = z.array(z.union([z.int(), z.string().regex(/^\d+$/).transform(Number)])).nullable().optional();

const DeltaItem = z.object({
  id: z.union([z.string(), z.number()]).optional(),
  question: z.string(),
  task_l1: z.string().optional(),
  sections: z.array(z.object({ content: z.string().optional(), section: z.string().optional() })),
  // The released files name the lists reason_error_/reason_unuseful_; the evaluator's copy
  // names them error_/idea_error_. Either pair is read.
  reason_error_section_numbers: nums,
  reason_unuseful_section_numbers: nums,
  error_section_numbers: nums,
  idea_error_section_numbers: nums,
});

/**
 * DeltaBench (not shipped: no licence): long traces split into sections. Each section becomes
 * one step (STEP-k = section k); gold = error sections ∪ unuseful sections, as its evaluator
 * scores them.
 */
export function loadDeltaBench(path: string): LoadedBenchmark {
  const records: TraceRecord[] = [];
  const skipped: LoadedBenchmark['skipped'] = [];
  for (const file of benchmarkFiles(path, ['.jsonl', '.json'])) {
    for (const { at, row, error } of readJsonRows(file)) {
      const where = `${stem(file)}:${at}`;
      const p = error ? null : DeltaItem.safeParse(row);
      if (!p?.success) {
        skipped.push({ source: where, reason: error ?? z.prettifyError(p!.error).replace(/\s+/g, ' ') });
        continue;
      }
      const it = p.data;
      const steps = it.sections.map((s) => s.content ?? s.section ?? '');
      if (steps.length === 0) {
        skipped.push({ source: where, reason: 'no sections' });
        continue;
      }
      const errors = it.reason_error_section_numbers ?? it.error_section_numbers ?? [];
      const unuseful = it.reason_unuseful_section_numbers ?? it.idea_error_section_numbers ?? [];
      const raw = [...new Set([...errors, ...unuseful])].sort((a, b) => a - b);
      records.push({
        id: `deltabench/${it.id ?? at}`,
        problem: it.question,
        steps,
        meta: { benchmark: 'deltabench', split: it.task_l1 ?? 'all', raw_error_steps: raw, error_sections: errors, unuseful_sections: unuseful },
        gold: { error_steps: raw.filter((s) => s >= 1 && s <= steps.length) },
      });
    }
  }
  return { benchmark: 'deltabench', scope: 'all_steps', records, skipped };
}
