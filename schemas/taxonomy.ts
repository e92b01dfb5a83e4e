import { z } from 'zod';

/**
 * A defect taxonomy: categories, each with leaves (two levels, as in the paper's App. J).
 * Ids are what shards store (`defects.category_id`, `defects.leaf_id`), so they must stay
 * stable once data carries them; names and descriptions are for people and for the prompt.
 */

/** Lower-case words joined by `_`; a leaf id is `<category id>.<leaf part>`. */
const ID_PART = /^[a-z0-9]+(?:_[a-z0-9]+)*$/;
const CategoryId = z.string().regex(ID_PART, 'category ids are lower_snake_case');
const LeafId = z.string().regex(/^[a-z0-9]+(?:_[a-z0-9]+)*\.[a-z0-9]+(?:_[a-z0-9]+)*$/, 'leaf ids are <category id>.<lower_snake_case>');

export const TaxonomyLeaf = z.object({ id: LeafId, name: z.string().min(1), description: z.string() }).strict();
export type TaxonomyLeaf = z.infer<typeof TaxonomyLeaf>;

export const TaxonomyCategory = z
  .object({ id: CategoryId, name: z.string().min(1), description: z.string(), leaves: z.array(TaxonomyLeaf).min(1) })
  .strict();
export type TaxonomyCategory = z.infer<typeof TaxonomyCategory>;

export const Taxonomy = z
  .object({
    version: z.literal(1),
    name: z.string().min(1),
    description: z.string().optional(),
    categories: z.array(TaxonomyCategory).min(1),
    /** Written by `taxonomy induce`: how the file was made (input size, passes). */
    induction: z.record(z.string(), z.unknown()).optional(),
  })
  .strict()
  .superRefine((t, ctx) => {
    const seen = new Set<string>();
    t.categories.forEach((c, ci) => {
      if (seen.has(c.id)) ctx.addIssue({ code: 'custom', path: ['categories', ci, 'id'], message: `duplicate id "${c.id}"` });
      seen.add(c.id);
      c.leaves.forEach((l, li) => {
        if (seen.has(l.id)) ctx.addIssue({ code: 'custom', path: ['categories', ci, 'leaves', li, 'id'], message: `duplicate id "${l.id}"` });
        seen.add(l.id);
        if (!l.id.startsWith(`${c.id}.`)) ctx.addIssue({ code: 'custom', path: ['categories', ci, 'leaves', li, 'id'], message: `leaf id "${l.id}" must start with its category id "${c.id}."` });
      });
    });
  });
export type Taxonomy = z.infer<typeof Taxonomy>;

// ---- Draft trees: the unfrozen taxonomy that induction grows and consolidates ----------------

export const DraftLeaf = z.object({ name: z.string().trim().min(1), description: z.string().default('') });
export type DraftLeaf = z.infer<typeof DraftLeaf>;
export const DraftCategory = z.object({ name: z.string().trim().min(1), description: z.string().default(''), subcategories: z.array(DraftLeaf).default([]) });
export type DraftCategory = z.infer<typeof DraftCategory>;
export const DraftTree = z.object({ categories: z.array(DraftCategory) });
export type DraftTree = z.infer<typeof DraftTree>;
