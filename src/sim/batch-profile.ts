import { z } from 'zod';

/**
 * The `batch:` section of a simulator profile: how the simulated OpenAI Batch API behaves
 * (src/sim/batch-api.ts). Failures and expiry hit a custom_id only the first time an accepted
 * batch holds it, so a client that resubmits what failed or expired sees it succeed.
 */

/** Globs, not regular expressions: ids are written in YAML (`rec-1*`) without escaping dots or brackets. */
const Glob = z.string().min(1);

export const BatchFailures = z
  .object({
    patterns: z.array(Glob).default([]).describe('custom_id globs (`*` any run of characters, `?` one character, matched against the whole id) whose lines go to the error file with HTTP 500'),
    rate: z.number().min(0).max(1).default(0).describe('share of custom_ids that fail as well, drawn from a hash of (seed, custom_id): the same ids fail on every run'),
    seed: z.int().default(0).describe('seed of the `rate` draw'),
  })
  .strict();

export const BatchExpiry = z
  .object({
    nth: z.array(z.int().positive()).default([]).describe('accepted batches that expire, numbered from 1 in the order the simulator accepted them'),
    custom_ids: z.array(Glob).default([]).describe('a batch expires when it holds, for the first time, a custom_id matching one of these globs'),
    completed_share: z
      .number()
      .min(0)
      .max(1)
      .default(0)
      .describe("share of an expiring batch's first-seen lines answered before it expires; the rest go to the error file as `batch_expired` (lines seen before are always answered)"),
  })
  .strict();

export const BatchBehaviour = z
  .object({
    completion_delay_ms: z.int().nonnegative().default(50).describe('time an accepted batch stays `in_progress` before its lines are answered'),
    max_requests: z.int().positive().default(50_000).describe('most lines one input file may hold (OpenAI: 50,000); more is HTTP 400 on upload'),
    max_bytes: z
      .int()
      .positive()
      .default(200 * 1024 * 1024)
      .describe('largest input file in bytes (OpenAI: 200 MB); larger is HTTP 400 on upload'),
    fail_custom_ids: BatchFailures.prefault({}).describe('lines that fail (HTTP 500 in the error file) the first time they are seen'),
    expire_batches: BatchExpiry.prefault({}).describe('batches that end `expired` instead of `completed`'),
  })
  .strict();
export type BatchBehaviour = z.infer<typeof BatchBehaviour>;
export type BatchBehaviourInput = z.input<typeof BatchBehaviour>;

/** The defaults: every batch completes after 50 ms, nothing fails or expires. */
export function defaultBatchBehaviour(): BatchBehaviour {
  return BatchBehaviour.parse({});
}

/** `*` and `?` globs as an anchored RegExp; every other character stands for itself. */
export function globRegExp(glob: string): RegExp {
  const body = [...glob].map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&'))).join('');
  return new RegExp(`^${body}$`, 's');
}
