/**
 * Step refs checked where the reply is validated, so a finding that cites no step of the trace
 * is a malformed reply: the gateway re-asks once with the reason (as for any reply that does not
 * match its schema), and a second such reply fails the juror for this record, which the verdict
 * then names. Dropping such findings quietly would let jurors that call a trace fatal end as a
 * clean `keep`.
 *
 * A reply numbered from 0 is not shifted: [0, 3] for a trace of 5 steps reads as STEP-1 and
 * STEP-4 counted from 0, or as one bad ref and STEP-3 counted from 1, and guessing wrong would
 * move every finding to its neighbour without a trace. The re-ask tells the model how the steps
 * are numbered instead, and the model renumbers its own reply.
 */
import type { z } from 'zod';
import { parseStepRef } from '../../schemas/defect.js';

interface Cited {
  statement_refs: ReadonlyArray<string | number>;
}

/** Why the refs of one finding do not point into a trace of `nSteps` steps; null when they do. */
export function refsProblem(refs: ReadonlyArray<unknown>, nSteps: number): string | null {
  if (refs.length === 0) return `it cites no step: every finding must cite at least one of STEP-1 to STEP-${nSteps}`;
  const bad = refs.filter((r) => {
    const n = parseStepRef(r);
    return n === null || n > nSteps;
  });
  if (bad.length === 0) return null;
  const listed = bad.map((r) => JSON.stringify(r)).join(', ');
  const fromZero = refs.some((r) => r === 0 || (typeof r === 'string' && /^\s*\[?\s*(?:step[\s_-]*)?0+\s*\]?\s*$/i.test(r)));
  const hint = fromZero ? ' (steps are numbered from 1, not from 0)' : '';
  return `${listed} ${bad.length === 1 ? 'is' : 'are'} not a step of this trace: it has ${nSteps} steps, STEP-1 to STEP-${nSteps}${hint}`;
}

type Refined<T> = z.ZodType<T>;
const cache = new WeakMap<z.ZodType, Map<number, z.ZodType>>();

/**
 * `schema` with every finding that `findings` picks out checked against a trace of `nSteps`
 * steps. One refined schema per (schema, step count), so the gateway's per-schema caches
 * (its JSON Schema, the response cache's validation) keep working.
 */
export function refsCheckedFor<T>(schema: z.ZodType<T>, findings: (v: T) => readonly Cited[], field: string, nSteps: number): Refined<T> {
  let byCount = cache.get(schema);
  if (!byCount) cache.set(schema, (byCount = new Map()));
  const hit = byCount.get(nSteps);
  if (hit) return hit as Refined<T>;
  const refined = schema.superRefine((value, ctx) => {
    findings(value).forEach((d, i) => {
      const problem = refsProblem(d.statement_refs, nSteps);
      if (problem) ctx.addIssue({ code: 'custom', path: [field, i, 'statement_refs'], message: problem });
    });
  });
  byCount.set(nSteps, refined);
  return refined;
}
