import { z } from 'zod';
import type { TraceRecord } from '../../../schemas/trace.js';
import type { LoadedBenchmark } from '../types.js';
import { benchmarkFiles, readJsonRows, stem } from './files.js';

const H2VItem = z.object({
  id: z.union([z.string(), z.number()]).optional(),
  unique_id: z.union([z.string(), z.number()]).optional(),
  question: z.string(),
  model_response_by_step: z.array(z.string()),
  human_labels: z.array(z.union([z.int(), z.boolean()])),
  human_labels_first_error_idx: z.int().nullable().optional(),
});

/**
 * Hard2Verify (not shipped: CC-BY-NC, encrypted on its hub): `human_labels[i]` is 1 for a correct
 * step; `human_labels_first_error_idx` is the 0-based first wrong step (-1 or null: none). The
 * benchmark counts every step after an error as wrong, so that propagation is part of the gold.
 */
export function loadHard2Verify(path: string): LoadedBenchmark {
  const records: TraceRecord[] = [];
  const skipped: LoadedBenchmark['skipped'] = [];
  for (const file of benchmarkFiles(path, ['.jsonl', '.json'])) {
    for (const { at, row, error } of readJsonRows(file)) {
      const where = `${stem(file)}:${at}`;
      const p = error ? null : H2VItem.safeParse(row);
      if (!p?.success) {
        skipped.push({ source: where, reason: error ?? z.prettifyError(p!.error).replace(/\s+/g, ' ') });
        continue;
      }
      const it = p.data;
      const steps = it.model_response_by_step;
      if (steps.length === 0 || it.human_labels.length !== steps.length) {
        skipped.push({ source: where, reason: steps.length === 0 ? 'no steps' : `${it.human_labels.length} labels for ${steps.length} steps` });
        continue;
      }
      const wrong = it.human_labels.map((l, i) => (Number(l) === 1 ? 0 : i + 1)).filter((s) => s > 0);
      const fi = it.human_labels_first_error_idx;
      const first = Math.min(...wrong, fi !== null && fi !== undefined && fi >= 0 ? fi + 1 : Infinity);
      const errors = Number.isFinite(first) ? steps.map((_, i) => i + 1).filter((s) => s >= first) : [];
      records.push({
        id: `hard2verify/${it.unique_id ?? it.id ?? at}`,
        problem: it.question,
        steps,
        meta: { benchmark: 'hard2verify', split: 'all' },
        gold: { error_steps: errors, first_error_step: errors[0] ?? null },
      });
    }
  }
  return { benchmark: 'hard2verify', scope: 'all_steps', records, skipped };
}
