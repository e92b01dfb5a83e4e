import { z } from 'zod';

/**
 * What the verification passes (removal pass, evidence arbiter) must return. Lenient at the
 * edge, as model output is: ids as "F2" or 2, booleans as "true"/"keep"/"drop".
 */
const findingRef = z.union([z.string(), z.number()]);
const text = z.preprocess((v) => (v === null || v === undefined ? '' : v), z.string());
const keepFlag = z.preprocess((v) => {
  if (typeof v !== 'string') return v;
  const s = v.trim().toLowerCase();
  return s === 'true' || s === 'keep' || s === 'yes' ? true : s === 'false' || s === 'drop' || s === 'no' ? false : v;
}, z.boolean());

export const RemovalOutput = z.object({
  decisions: z.array(z.object({ id: findingRef, keep: keepFlag, reason: text })),
});
export type RemovalOutput = z.infer<typeof RemovalOutput>;

const ruling = z.preprocess((v) => (typeof v === 'string' ? v.trim().toLowerCase() : v), z.enum(['upheld', 'rejected']));

export const ArbiterOutput = z.object({
  rulings: z.array(z.object({ id: findingRef, ruling, rationale: text })),
});
export type ArbiterOutput = z.infer<typeof ArbiterOutput>;

/** The deliberation grounding checker's answer on one new claim. */
export const GroundingCheckOutput = z.object({ grounded: keepFlag, reason: text });
export type GroundingCheckOutput = z.infer<typeof GroundingCheckOutput>;
