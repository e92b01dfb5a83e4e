import { readFileSync } from 'node:fs';
import { Taxonomy, TaxonomyCategory, TaxonomyLeaf } from '../../schemas/taxonomy.js';
import { defaultTaxonomyPath } from '../util/paths.js';
import { ReasoningJuryError } from '../util/errors.js';

/** The taxonomy contract lives in schemas/taxonomy.ts; loading and lookups are here. */
export { Taxonomy, TaxonomyCategory, TaxonomyLeaf, defaultTaxonomyPath };

export class TaxonomyError extends ReasoningJuryError {
  override get kind() {
    return 'input' as const;
  }
  override name = 'TaxonomyError';
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
