import type { Taxonomy, TaxonomyCategory } from '../taxonomy/schema.js';
import type { ConsolidateReply, DraftCategory, DraftTree } from '../taxonomy/wire.js';

/**
 * The code side of growing and consolidating: a model proposes, these functions enforce the
 * rules the paper states (grow only accretes; consolidation keeps the set exhaustive; the
 * frozen tree has two levels and stable ids), whatever the reply looks like.
 */

/** Names compare case- and space-insensitively: "Sign error" and "sign  error" are one node. */
export const normName = (s: string): string => s.trim().replace(/\s+/g, ' ').toLowerCase();

const cloneTree = (t: DraftTree): DraftTree => ({ categories: t.categories.map((c) => ({ ...c, subcategories: c.subcategories.map((s) => ({ ...s })) })) });

export interface GrowMerge {
  tree: DraftTree;
  added: number;
  /** existing nodes the reply dropped or reworded (kept verbatim anyway) */
  restored: number;
}

/**
 * Accretion: everything in `prev` stays exactly as it was, in place; from `reply` only nodes
 * whose names are new are appended. A subcategory already present under another category is not
 * added again (no moves), and a new category without subcategories is ignored (two levels).
 */
export function mergeGrown(prev: DraftTree, reply: DraftTree): GrowMerge {
  const tree = cloneTree(prev);
  const cats = new Map(tree.categories.map((c) => [normName(c.name), c] as const));
  const leaves = new Set(tree.categories.flatMap((c) => c.subcategories.map((s) => normName(s.name))));
  const replyLeaves = new Set(reply.categories.flatMap((c) => c.subcategories.map((s) => normName(s.name))));
  const restored = [...leaves].filter((n) => !replyLeaves.has(n)).length + tree.categories.filter((c) => !reply.categories.some((r) => normName(r.name) === normName(c.name))).length;
  let added = 0;
  for (const rc of reply.categories) {
    const fresh = rc.subcategories.filter((s) => !leaves.has(normName(s.name)));
    if (fresh.length === 0) continue;
    let home = cats.get(normName(rc.name));
    if (!home) {
      home = { name: rc.name.trim(), description: rc.description.trim(), subcategories: [] };
      tree.categories.push(home);
      cats.set(normName(home.name), home);
      added++;
    }
    for (const s of fresh) {
      if (leaves.has(normName(s.name))) continue; // twice in one reply
      home.subcategories.push({ name: s.name.trim(), description: s.description.trim() });
      leaves.add(normName(s.name));
      added++;
    }
  }
  return { tree, added, restored };
}

export interface Reconciled {
  tree: DraftTree;
  /** kept leaf name -> names folded into it */
  merges: Array<{ into: string; from: string[] }>;
  /** grown leaves the reply lost, put back under their grown category */
  restored: string[];
}

/**
 * Consolidation reply -> a tree that still covers every grown leaf: a grown leaf must be kept
 * (same name) or named in some kept leaf's merged_from, else it is put back. Duplicate kept
 * names are folded together and categories left empty are dropped.
 */
export function reconcileConsolidation(grown: DraftTree, reply: ConsolidateReply): Reconciled {
  const tree: DraftTree = { categories: [] };
  const catByName = new Map<string, DraftCategory>();
  const keptByName = new Map<string, { leaf: DraftCategory['subcategories'][number]; from: string[] }>();
  const covered = new Set<string>();
  for (const rc of reply.categories) {
    for (const s of rc.subcategories) {
      const key = normName(s.name);
      const from = s.merged_from.filter((f) => normName(f) !== key);
      covered.add(key);
      for (const f of from) covered.add(normName(f));
      const prev = keptByName.get(key);
      if (prev) {
        prev.from.push(...from);
        continue;
      }
      let cat = catByName.get(normName(rc.name));
      if (!cat) {
        cat = { name: rc.name.trim(), description: rc.description.trim(), subcategories: [] };
        catByName.set(normName(rc.name), cat);
        tree.categories.push(cat);
      }
      const leaf = { name: s.name.trim(), description: s.description.trim() };
      cat.subcategories.push(leaf);
      keptByName.set(key, { leaf, from });
    }
  }
  const restored: string[] = [];
  for (const gc of grown.categories) {
    for (const s of gc.subcategories) {
      if (covered.has(normName(s.name))) continue;
      let cat = catByName.get(normName(gc.name));
      if (!cat) {
        cat = { name: gc.name, description: gc.description, subcategories: [] };
        catByName.set(normName(gc.name), cat);
        tree.categories.push(cat);
      }
      cat.subcategories.push({ ...s });
      covered.add(normName(s.name));
      restored.push(s.name);
    }
  }
  tree.categories = tree.categories.filter((c) => c.subcategories.length > 0);
  const merges = [...keptByName.values()].filter((k) => k.from.length > 0).map((k) => ({ into: k.leaf.name, from: [...new Set(k.from)] }));
  return { tree, merges, restored };
}

const SLUG_SKIP = new Set(['a', 'an', 'and', 'as', 'of', 'or', 'the', 'to', 'in', 'on', 'for', 'with', 'by']);

/** lower_snake_case ASCII of a name without filler words, at most `max` characters, cut at a word boundary. */
export function slug(name: string, max = 40): string {
  const all = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  const words = all.filter((w) => !SLUG_SKIP.has(w));
  let out = '';
  for (const w of words.length > 0 ? words : all) {
    const next = out ? `${out}_${w}` : w;
    if (next.length > max) break;
    out = next;
  }
  return out || (all[0]?.slice(0, max) ?? '') || 'node';
}

function unique(base: string, taken: Set<string>): string {
  let id = base;
  for (let n = 2; taken.has(id); n++) id = `${base}_${n}`;
  taken.add(id);
  return id;
}

/**
 * Freezes a two-level tree into a Taxonomy with ids made from names (category `slug` of at
 * most 24 characters, leaf `<category>.<slug>`), so the same tree always gets the same ids, and re-running an induction
 * that lands on the same names keeps the ids data already carries.
 */
export function freezeTree(tree: DraftTree, name: string, induction: Record<string, unknown>): Taxonomy {
  const taken = new Set<string>();
  const categories: TaxonomyCategory[] = tree.categories.map((c) => {
    const id = unique(slug(c.name, 24), taken);
    const leafTaken = new Set<string>();
    return {
      id,
      name: c.name,
      description: c.description,
      leaves: c.subcategories.map((s) => ({ id: `${id}.${unique(slug(s.name), leafTaken)}`, name: s.name, description: s.description })),
    };
  });
  return { version: 1, name, categories, induction };
}
