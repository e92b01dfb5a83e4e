import { z } from 'zod';
import { DraftCategory, DraftLeaf, DraftTree, type Taxonomy } from '../../schemas/taxonomy.js';
import { parseJsonLines, TAXONOMY_BLOCK } from '../prompts/taxonomy-wire.js';

/**
 * What taxonomy prompts carry and what the model answers: the prompt builders render these
 * blocks and the zod schemas below check replies. The block labels, the JSON-lines reader and
 * the draft-tree contract sit in lower layers (src/prompts/taxonomy-wire.ts,
 * schemas/taxonomy.ts) so the simulator can read them without the taxonomy package.
 */

export { DraftCategory, DraftLeaf, DraftTree, parseJsonLines, TAXONOMY_BLOCK };

/** Longest defect description shown to the model; the rest rarely changes the kind of mistake. */
export const MAX_DESCRIPTION_CHARS = 600;

/** Cut at `max` characters without splitting a surrogate pair. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max;
  const c = text.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}

export interface LeafLine {
  id: string;
  category: string;
  name: string;
  description: string;
}

export function renderLeaves(t: Taxonomy): string {
  const lines: string[] = [];
  for (const c of t.categories) for (const l of c.leaves) lines.push(JSON.stringify({ id: l.id, category: c.name, name: l.name, description: l.description } satisfies LeafLine));
  return lines.join('\n');
}

export interface DefectLine {
  key: string;
  severity?: string;
  description: string;
}

export function renderDefectLines(defects: readonly DefectLine[]): string {
  return defects.map((d) => JSON.stringify({ key: d.key, ...(d.severity ? { severity: d.severity } : {}), description: clip(d.description, MAX_DESCRIPTION_CHARS) })).join('\n');
}

export function renderTree(tree: DraftTree): string {
  return JSON.stringify({ categories: tree.categories.map((c) => ({ name: c.name, description: c.description, subcategories: c.subcategories.map((s) => ({ name: s.name, description: s.description })) })) }, null, 1);
}

// ---- Replies ------------------------------------------------------------------------------

/** Marks an answer outside the allowed ids; the original value follows the prefix. */
export const INVALID_LEAF = '\u0000invalid:';

/**
 * The assignment reply. `leaf_id` is an enum of the taxonomy's leaf ids, so the JSON Schema the
 * gateway derives constrains decoding where the engine supports it; `.catch` keeps parsing
 * lenient per entry, so one bad id costs a retry of that defect, not of the whole batch.
 */
export function assignReplySchema(leafIds: readonly string[]) {
  if (leafIds.length === 0) throw new Error('a taxonomy needs at least one leaf');
  const ids = leafIds as [string, ...string[]];
  return z.object({
    assignments: z.array(
      z.object({
        key: z.preprocess((v) => (typeof v === 'number' ? `D${v}` : v), z.string()),
        leaf_id: z.enum(ids).catch((ctx) => `${INVALID_LEAF}${typeof ctx.input === 'string' ? ctx.input : JSON.stringify(ctx.input) ?? 'undefined'}`),
      }),
    ),
  });
}
export type AssignReply = z.infer<ReturnType<typeof assignReplySchema>>;

export const GrowReply = z.object({ taxonomy: DraftTree });
export type GrowReply = z.infer<typeof GrowReply>;

export const ConsolidatedLeaf = DraftLeaf.extend({ merged_from: z.array(z.string()).default([]) });
export const ConsolidateReply = z.object({
  categories: z.array(DraftCategory.extend({ subcategories: z.array(ConsolidatedLeaf).default([]) })),
});
export type ConsolidateReply = z.infer<typeof ConsolidateReply>;
