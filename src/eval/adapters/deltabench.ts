import { z } from 'zod';
import type { TraceRecord } from '../../../schemas/trace.js';
import type { LoadedBenchmark } from '../types.js';
import { benchmarkFiles, readJsonRows, stem } from './files.js';

const num = z.union([z.int(), z.string().regex(/^\d+$/).transform(Number)]);
/** A list of section numbers, also when a CSV export stored it as the text "[3, 5]". */
const nums = z.preprocess((v) => (typeof v === 'string' && v.trim().startsWith('[') ? JSON.parse(v) : v), z.array(num).nullable().optional());

const DeltaItem = z.object({
  id: z.union([z.string(), z.number()]).optional(),
  question: z.string(),
  task_l1: z.string().optional(),
  sections: z.array(z.object({ content: z.string().optional(), section: z.string().optional() })).optional(),
  // The released file holds the trace as one text with "section<k>:" headers, which the
  // official evaluator reads from `sections_content` (or `section_content`).
  sections_content: z.string().optional(),
  section_content: z.string().optional(),
  // The released files name the lists reason_error_/reason_unuseful_; the evaluator's copy
  // names them error_/idea_error_. Either pair is read.
  reason_error_section_numbers: nums,
  reason_unuseful_section_numbers: nums,
  error_section_numbers: nums,
  idea_error_section_numbers: nums,
});

const HEADER = /^[ \t]*section[ \t]*(\d+)[ \t]*:[ \t]*/gim;

/**
 * The released text form: each section starts on a line "section<k>:" and runs to the next
 * header. Headers must number the sections 1, 2, 3, ... in order, since gold cites those numbers.
 */
export function splitSections(text: string): { steps: string[] } | { error: string } {
  const heads = [...text.matchAll(HEADER)];
  if (heads.length === 0) return { error: 'sections_content has no "section1:" header' };
  const steps: string[] = [];
  for (let i = 0; i < heads.length; i++) {
    const h = heads[i]!;
    if (Number(h[1]) !== i + 1) return { error: `sections_content header ${i + 1} reads "${h[0].trim()}"` };
    const end = i + 1 < heads.length ? heads[i + 1]!.index : text.length;
    steps.push(text.slice(h.index + h[0].length, end).trim());
  }
  return { steps };
}

/**
 * DeltaBench (not shipped: no licence): long traces split into sections. Each section becomes
 * one step (STEP-k = section k); gold = error sections ∪ unuseful sections, as its evaluator
 * scores them. Sections come from `sections_content` text as released, or a `sections` array.
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
      const text = it.sections_content ?? it.section_content;
      const split = it.sections ? { steps: it.sections.map((s) => s.content ?? s.section ?? '') } : text !== undefined ? splitSections(text) : { error: 'neither sections nor sections_content' };
      if ('error' in split) {
        skipped.push({ source: where, reason: split.error });
        continue;
      }
      const steps = split.steps;
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
