import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { TraceRecord } from '../../../schemas/trace.js';
import type { LoadedBenchmark } from '../types.js';
import { benchmarkFiles, stem } from './files.js';

const MrBenItem = z.object({
  Question_UUID: z.string(),
  Subject: z.string().optional(),
  Question: z.string(),
  Options: z.string().optional(),
  Sampled_Model: z.string().optional(),
  Model_Solution_Steps: z.union([z.array(z.string()), z.string()]),
  Model_Solution_Correctness: z.string().optional(),
  Model_Solution_First_Error_Step: z.union([z.string(), z.number()]),
  Model_Solution_Error_Reason: z.unknown().optional(),
});
type MrBenItem = z.infer<typeof MrBenItem>;

const STEP_LABEL = /^\s*Step\s*(\d+)\s*[:.]/i;

/**
 * "Step N: ..." items -> steps where STEP-N is the annotators' Step N. Items without a label
 * (blank separators dropped, "Choice A: ..." continuations, the closing "Solution: ...") join the
 * step they follow, so the gold boundaries are kept and nothing is re-segmented.
 */
export function mrBenTextSteps(items: readonly string[]): string[] | { error: string } {
  const steps: string[] = [];
  let lead: string[] = [];
  for (const item of items) {
    if (item.trim() === '') continue;
    const m = STEP_LABEL.exec(item);
    if (m) {
      if (Number(m[1]) !== steps.length + 1) return { error: `step labels are not 1, 2, 3, ... (found Step ${m[1]} at position ${steps.length + 1})` };
      steps.push([...lead, item].join('\n'));
      lead = [];
    } else if (steps.length === 0) lead.push(item);
    else steps[steps.length - 1] += `\n${item}`;
  }
  if (steps.length === 0) return { error: 'no "Step N:" items' };
  if (lead.length) steps[0] = `${lead.join('\n')}\n${steps[0]}`;
  return steps;
}

/** Coding solutions are one code string: each non-blank line is a step; the gold names the line's text. */
function codingSteps(code: string, firstError: string | null): { steps: string[]; first: number | null } | { error: string } {
  const steps = code.split(/\r?\n/).filter((l) => l.trim() !== '');
  if (steps.length === 0) return { error: 'empty solution' };
  if (firstError === null) return { steps, first: null };
  let i = steps.findIndex((l) => l.trimEnd() === firstError.trimEnd());
  if (i < 0) i = steps.findIndex((l) => l.trim() === firstError.trim());
  if (i < 0) return { error: 'the first-error line is not a line of the solution' };
  return { steps, first: i + 1 };
}

function toRecord(it: MrBenItem, split: string, pos: number): TraceRecord | { error: string } {
  const fe = String(it.Model_Solution_First_Error_Step).trim();
  const clean = fe === '' || /^n\/?a$/i.test(fe);
  if (clean && it.Model_Solution_Correctness?.toLowerCase() === 'incorrect') return { error: 'solution is marked incorrect but names no first error step' };
  let steps: string[];
  let first: number | null;
  if (typeof it.Model_Solution_Steps === 'string') {
    const c = codingSteps(it.Model_Solution_Steps, clean ? null : String(it.Model_Solution_First_Error_Step));
    if ('error' in c) return c;
    ({ steps, first } = c);
  } else {
    const s = mrBenTextSteps(it.Model_Solution_Steps);
    if ('error' in s) return s;
    steps = s;
    first = clean ? null : Number(fe);
    if (first !== null && !(Number.isInteger(first) && first >= 1 && first <= steps.length)) return { error: `first error step "${fe}" is not one of steps 1..${steps.length}` };
  }
  return {
    id: `mr-ben/${split}/${it.Question_UUID}/${pos}`,
    problem: it.Options ? `${it.Question}\n\n${it.Options}` : it.Question,
    steps,
    meta: { benchmark: 'mr-ben', split, subject: it.Subject ?? null, sampled_model: it.Sampled_Model ?? null, correctness: it.Model_Solution_Correctness ?? null },
    gold: { first_error_step: first },
  };
}

/**
 * MR-Ben: each subject file maps a question UUID to its sampled solutions. The first error step
 * is 1-based ("N/A" when the solution is correct); later steps are unlabelled.
 */
export function loadMrBen(path: string): LoadedBenchmark {
  const records: TraceRecord[] = [];
  const skipped: LoadedBenchmark['skipped'] = [];
  for (const file of benchmarkFiles(path, ['.json'])) {
    const split = stem(file);
    const data = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    const groups = Array.isArray(data) ? { all: data } : (data as Record<string, unknown>);
    for (const [key, list] of Object.entries(groups)) {
      (Array.isArray(list) ? list : [list]).forEach((raw, pos) => {
        const where = `${split}/${key}/${pos}`;
        const p = MrBenItem.safeParse(raw);
        if (!p.success) return void skipped.push({ source: where, reason: z.prettifyError(p.error).replace(/\s+/g, ' ') });
        const r = toRecord(p.data, split, pos);
        if ('error' in r) skipped.push({ source: where, reason: r.error });
        else records.push(r);
      });
    }
  }
  return { benchmark: 'mr-ben', scope: 'first_error', records, skipped };
}
