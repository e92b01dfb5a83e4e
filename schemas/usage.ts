import { z } from 'zod';

/** Which part of the method a model call served. */
export const Phase = z.enum(['phase1', 'consolidation', 'moderator', 'juror_turn', 'extraction', 'taxonomy', 'removal', 'arbiter', 'grounding', 'repair']);
export type Phase = z.infer<typeof Phase>;

/**
 * Usage of one logical model call (after retries). Stored in the verdict; a cache replay
 * reproduces the recorded numbers so replayed verdicts are byte-identical.
 */
export const CallUsage = z.object({
  phase: Phase,
  participant: z.string(), // juror id, "consolidator", "moderator", ...
  model: z.string(),
  endpoint: z.string(),
  tokens_in: z.int().nonnegative(),
  tokens_out: z.int().nonnegative(),
  /** null when the model has no price in the config (unknown, not 0) */
  cost_usd: z.number().nonnegative().nullable(),
  latency_ms: z.number().nonnegative(),
  attempts: z.int().positive(),
  outcome: z.enum(['ok', 'error']),
});
export type CallUsage = z.infer<typeof CallUsage>;
