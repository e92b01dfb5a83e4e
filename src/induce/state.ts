import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { LocalObjectStore } from '../pipeline/storage/object-store.js';
import { Taxonomy } from '../taxonomy/schema.js';
import { DraftTree } from '../taxonomy/wire.js';

/**
 * The induction checkpoint (<work>/state.json), rewritten atomically after every grow batch,
 * the consolidation and every wave of assignment batches. A killed job restarts from it and
 * makes the same calls it would have made, so with the response cache a resumed run ends
 * where an uninterrupted one would.
 */

const LabelState = z.discriminatedUnion('s', [
  z.object({ s: z.literal('a'), leaf: z.string(), pass: z.int().nonnegative() }),
  z.object({ s: z.literal('u'), reason: z.enum(['invalid_leaf', 'omitted', 'call_failed']), detail: z.string(), pass: z.int().nonnegative() }),
]);
export type LabelState = z.infer<typeof LabelState>;

export const InduceParams = z.object({
  grow_batch: z.int().positive(),
  grow_limit: z.int().positive().nullable(),
  assign_batch: z.int().positive(),
  max_rounds: z.int().positive(),
  max_passes: z.int().positive(),
  seat: z.string(),
});
export type InduceParams = z.infer<typeof InduceParams>;

export const InduceState = z.object({
  version: z.literal(1),
  input: z.string(),
  params: InduceParams,
  grow: z.object({
    batches: z.int().nonnegative(),
    next: z.int().nonnegative(),
    tree: DraftTree,
    added: z.int().nonnegative(),
    restored: z.int().nonnegative(),
    skipped: z.array(z.int().nonnegative()),
  }),
  consolidation: z
    .object({
      taxonomy: Taxonomy,
      merges: z.array(z.object({ into: z.string(), from: z.array(z.string()) })),
      restored: z.array(z.string()),
    })
    .nullable(),
  assign: z
    .object({
      pass: z.int().nonnegative(),
      /** this pass's batches (defect ids), fixed when the pass starts */
      batches: z.array(z.array(z.string())),
      next: z.int().nonnegative(),
      labels: z.record(z.string(), LabelState),
    })
    .nullable(),
  done: z.boolean(),
});
export type InduceState = z.infer<typeof InduceState>;

export const STATE_FILE = 'state.json';

export async function readState(workDir: string): Promise<InduceState | null> {
  let text: string;
  try {
    text = await readFile(new LocalObjectStore(workDir).locate(STATE_FILE), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  const r = InduceState.safeParse(JSON.parse(text));
  if (!r.success) throw new Error(`${workDir}/${STATE_FILE} is not an induction checkpoint (${r.error.issues[0]?.message}); delete the folder to start over`);
  return r.data;
}

export async function writeState(workDir: string, state: InduceState): Promise<void> {
  await new LocalObjectStore(workDir).putObject(STATE_FILE, new TextEncoder().encode(JSON.stringify(state)));
}
