import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { TraceRecord } from '../../../schemas/trace.js';
import type { LoadedBenchmark } from '../types.js';
import { benchmarkFiles, stem } from './files.js';

/** One ProcessBench item: `label` is the 0-based earliest erroneous step, -1 when all are correct. */
const ProcessBenchItem = z.object({
  id: z.string(),
  generator: z.string().optional(),
  problem: z.string(),
  steps: z.array(z.string()),
  final_answer_correct: z.boolean().optional(),
  label: z.int().min(-1),
});

/**
 * A ProcessBench split as trace records with the benchmark's own step boundaries (never
 * re-segmented). Gold: the earliest error as a 1-based step; later steps are unlabelled.
 */
export function loadProcessBench(path: string): TraceRecord[] {
  const split = stem(path);
  const items = z.array(ProcessBenchItem).parse(JSON.parse(readFileSync(path, 'utf8')));
  return items.map((it) => ({
    id: `processbench/${split}/${it.id}`,
    problem: it.problem,
    steps: it.steps,
    meta: { benchmark: 'processbench', split, generator: it.generator ?? null },
    gold: {
      first_error_step: it.label >= 0 ? it.label + 1 : null,
      ...(it.final_answer_correct !== undefined ? { final_answer_correct: it.final_answer_correct } : {}),
    },
  }));
}

/** A split file or the folder of the four split files. */
export function loadProcessBenchSet(path: string): LoadedBenchmark {
  const records: TraceRecord[] = [];
  const skipped: LoadedBenchmark['skipped'] = [];
  for (const file of benchmarkFiles(path, ['.json'])) {
    for (const r of loadProcessBench(file)) {
      const label = r.gold?.first_error_step;
      if (label && label > (r.steps?.length ?? 0)) skipped.push({ source: r.id, reason: `label ${label - 1} is past the last step` });
      else records.push(r);
    }
  }
  return { benchmark: 'processbench', scope: 'first_error', records, skipped };
}
