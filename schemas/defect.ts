import { z } from 'zod';

/** Severity scale of the paper (App. D): neutral=0 < minor=1 < major=2 < fatal=3. */
export const IMPACTS = ['neutral', 'minor', 'major', 'fatal'] as const;
export const Impact = z.enum(IMPACTS);
export type Impact = z.infer<typeof Impact>;

export const IMPACT_RANK: Record<Impact, number> = { neutral: 0, minor: 1, major: 2, fatal: 3 };

export function maxImpact(impacts: Iterable<Impact>): Impact | null {
  let best: Impact | null = null;
  for (const i of impacts) if (best === null || IMPACT_RANK[i] > IMPACT_RANK[best]) best = i;
  return best;
}

/**
 * One step-grounded defect as the pipeline stores it. `statement_refs` are 1-based step
 * numbers (STEP-3 -> 3), already checked against the trace's step count.
 */
export const Defect = z.object({
  statement_refs: z.array(z.int().positive()),
  what_went_wrong: z.string(),
  impact: Impact,
  evidence: z.string(),
  correct_value: z.string().nullable().optional(),
  vote_count: z.int().nonnegative().optional(),
  voters: z.array(z.string()).optional(),
});
export type Defect = z.infer<typeof Defect>;

// ---- What a model returns (lenient at the edge, normalised into Defect) ----

/** "STEP-3", "[STEP-3]", "step 3", "3" or 3 -> 3; anything else ("-1", "STEP-0") -> null. */
export function parseStepRef(ref: unknown): number | null {
  if (typeof ref === 'number') return Number.isInteger(ref) && ref > 0 ? ref : null;
  if (typeof ref !== 'string') return null;
  // The separator belongs to "step": a bare "-1" is a negative number, not STEP-1.
  const m = /^\s*\[?\s*(?:step[\s_-]*)?(\d+)\s*\]?\s*$/i.exec(ref);
  if (!m) return null;
  const n = Number(m[1]);
  return n > 0 ? n : null;
}

const lenientImpact = z.preprocess(
  (v) => (typeof v === 'string' ? v.trim().toLowerCase() : v),
  Impact,
);
const textField = z.preprocess((v) => (v === null || v === undefined ? '' : v), z.string());
const optionalText = z.preprocess(
  (v) => (v === undefined ? undefined : v === null ? null : typeof v === 'string' ? v : JSON.stringify(v)),
  z.string().nullable().optional(),
);

export const ModelDefect = z.object({
  statement_refs: z.preprocess((v) => (Array.isArray(v) ? v : v === undefined || v === null ? [] : [v]), z.array(z.union([z.string(), z.number()]))),
  what_went_wrong: z.string().min(1),
  impact: lenientImpact,
  evidence: textField,
  correct_value: optionalText,
  vote_count: z.preprocess((v) => (typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v), z.int().nonnegative().optional()),
  voters: z.array(z.string()).optional(),
});
export type ModelDefect = z.infer<typeof ModelDefect>;

/** The JSON object a Phase 1 juror or the consolidator must return. */
export const JudgementOutput = z.object({ negatives: z.array(ModelDefect) });
export type JudgementOutput = z.infer<typeof JudgementOutput>;
