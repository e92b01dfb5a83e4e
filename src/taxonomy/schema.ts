import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { packageRoot } from '../util/paths.js';

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

export class TaxonomyError extends Error {
  override name = 'TaxonomyError';
}

export function defaultTaxonomyPath(): string {
  return join(packageRoot(), 'taxonomy', 'default.json');
}

export function parseTaxonomy(raw: unknown, source = 'taxonomy'): Taxonomy {
  const r = Taxonomy.safeParse(raw);
  if (!r.success) {
    const lines = r.error.issues.map((i) => `  - ${i.path.length ? i.path.join('.') : '(top level)'}: ${i.message}`);
    throw new TaxonomyError(`invalid taxonomy in ${source}:\n${lines.join('\n')}`);
  }
  return r.data;
}

/** The taxonomy in `path` (JSON), or the shipped default (paper App. J) when no path is given. */
export function loadTaxonomy(path?: string): Taxonomy {
  const file = path ?? defaultTaxonomyPath();
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new TaxonomyError(`cannot read taxonomy ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new TaxonomyError(`taxonomy ${file} is not valid JSON: ${(e as Error).message}`);
  }
  return parseTaxonomy(raw, file);
}

export interface LeafEntry {
  leaf: TaxonomyLeaf;
  category: TaxonomyCategory;
}

/** Lookups over a taxonomy: leaf id -> leaf and its category, in file order. */
export class TaxonomyIndex {
  readonly leaves = new Map<string, LeafEntry>();
  readonly categories = new Map<string, TaxonomyCategory>();

  constructor(readonly taxonomy: Taxonomy) {
    for (const c of taxonomy.categories) {
      this.categories.set(c.id, c);
      for (const l of c.leaves) this.leaves.set(l.id, { leaf: l, category: c });
    }
  }

  leaf(id: string): LeafEntry | undefined {
    return this.leaves.get(id);
  }

  get leafCount(): number {
    return this.leaves.size;
  }
}
