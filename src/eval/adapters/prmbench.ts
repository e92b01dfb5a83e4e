import { z } from 'zod';
import type { TraceRecord } from '../../../schemas/trace.js';
import type { LoadedBenchmark } from '../types.js';
import { benchmarkFiles, readJsonRows, stem } from './files.js';

const PrmItem = z.object({
  idx: z.string(),
  classification: z.string(),
  modified_question: z.string(),
  modified_process: z.array(z.string()),
  error_steps: z.array(z.int()),
  original_question: z.string().optional(),
  original_process: z.array(z.string()).optional(),
});

/** The error class whose original solutions form the clean companion set (spelled as in the data). */
export const PRM_COMPANION_SOURCE = 'redundency';
export const PRM_COMPANION_CLASS = 'correct';

export interface PrmOptions {
  /** add the clean companion records built from the redundancy class's original solutions */
  companion?: boolean;
}

/**
 * PRMBench: judge `modified_question` + `modified_process`; `error_steps` are 1-based and list
 * every erroneous step. Refs past the end of the trace are kept in meta.raw_error_steps but are
 * no gold step (the official scorer only visits existing steps). As the official loader does,
 * records are keyed "<class>_<idx>", a repeated key keeps its first record, and each redundancy
 * item contributes its original solution once as a clean "correct" record.
 */
export function loadPrmBench(path: string, opts: PrmOptions = {}): LoadedBenchmark {
  const companion = opts.companion ?? true;
  const records: TraceRecord[] = [];
  const skipped: LoadedBenchmark['skipped'] = [];
  const seen = new Set<string>();
  for (const file of benchmarkFiles(path, ['.jsonl'])) {
    for (const { at, row, error } of readJsonRows(file)) {
      const where = `${stem(file)}:${at}`;
      const p = error ? null : PrmItem.safeParse(row);
      if (!p?.success) {
        skipped.push({ source: where, reason: error ?? z.prettifyError(p!.error).replace(/\s+/g, ' ') });
        continue;
      }
      const it = p.data;
      if (it.classification === PRM_COMPANION_SOURCE && companion && it.original_process?.length) {
        const key = `${PRM_COMPANION_CLASS}_${it.idx}`;
        if (!seen.has(key)) {
          seen.add(key);
          records.push({
            id: `prmbench/${key}`,
            problem: it.original_question ?? it.modified_question,
            steps: it.original_process,
            meta: { benchmark: 'prmbench', split: PRM_COMPANION_CLASS, classification: PRM_COMPANION_CLASS, raw_error_steps: [], file: stem(file) },
            gold: { error_steps: [] },
          });
        }
      }
      const key = `${it.classification}_${it.idx}`;
      if (seen.has(key)) {
        skipped.push({ source: where, reason: `repeated key ${key} (the official loader keeps the first)` });
        continue;
      }
      if (it.modified_process.length === 0) {
        skipped.push({ source: where, reason: 'no steps' });
        continue;
      }
      seen.add(key);
      const n = it.modified_process.length;
      const inRange = [...new Set(it.error_steps)].filter((s) => s >= 1 && s <= n).sort((a, b) => a - b);
      records.push({
        id: `prmbench/${key}`,
        problem: it.modified_question,
        steps: it.modified_process,
        meta: { benchmark: 'prmbench', split: it.classification, classification: it.classification, raw_error_steps: it.error_steps, file: stem(file) },
        gold: { error_steps: inRange },
      });
    }
  }
  return { benchmark: 'prmbench', scope: 'all_steps', records, skipped };
}
