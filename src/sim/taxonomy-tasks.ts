import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ChatRequest } from '../llm/types.js';
import { DraftTree, Taxonomy, type DraftCategory, type DraftLeaf } from '../../schemas/taxonomy.js';
import { parseJsonLines, TAXONOMY_BLOCK } from '../prompts/taxonomy-wire.js';
import { defaultTaxonomyPath } from '../util/paths.js';
import { createRng, type Rng } from '../util/prng.js';
import { createMatcher, type Matcher } from './taxonomy-match.js';

/**
 * The simulator's taxonomy tasks (src/taxonomy prompts): assign, grow and consolidate.
 *
 * A leaf choice is a function of the defect text, the model, its seed and the taxonomy, so a
 * re-ask or a re-run picks the same leaf; only the slips (an invalid id, a skipped defect, a
 * dropped node) come from the request's own stream and so differ between retries. Growing
 * and consolidating are steered by a "concept bank", the shipped default taxonomy: a defect
 * fits an existing node when both read like the same bank leaf.
 *
 * These objects match SimTask (src/sim/tasks.ts) structurally; tasks.ts registers them, so
 * this module must not import it back.
 */

interface TaskIn {
  request: ChatRequest;
  modelName: string;
  blocks: ReadonlyMap<string, string>;
  rng: Rng;
}
type TaskOut = { kind: 'json'; value: Record<string, unknown>; notes: string[] } | { kind: 'text'; text: string; notes: string[] };
export interface TaxonomySimTask {
  name: string;
  detect(blocks: ReadonlyMap<string, string>): boolean;
  streamKey(blocks: ReadonlyMap<string, string>): string;
  run(input: TaskIn): TaskOut;
}

export interface TaxonomySimOptions {
  /** per defect: answer an id that is not in the taxonomy */
  invalidRate: number;
  /** per defect: leave it out of the answer */
  omitRate: number;
  /** per defect (stable): take the second-best leaf, as a model sometimes would */
  confusion: number;
  /** per defect (stable) when growing: miss that an existing node fits and add a near-duplicate */
  missFit: number;
  /** per grow call: drop one existing node from the reply (the caller must restore it) */
  dropNode: number;
}

export const DEFAULT_TAXONOMY_SIM: TaxonomySimOptions = { invalidRate: 0.03, omitRate: 0.02, confusion: 0.1, missFit: 0.05, dropNode: 0.05 };

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const hasOnly = (b: ReadonlyMap<string, string>, labels: readonly string[]) => b.size === labels.length && labels.every((l) => b.has(l));
const textReply = (text: string): TaskOut => ({ kind: 'text', text, notes: [] });

// Matchers are built from a block's text: keep the few most recent (one taxonomy per run, usually).
const matchers = new Map<string, Matcher>();
function matcherFor(key: string, build: () => Matcher): Matcher {
  let m = matchers.get(key);
  if (!m) {
    if (matchers.size >= 16) matchers.delete(matchers.keys().next().value!);
    matchers.set(key, (m = build()));
  }
  return m;
}

let bank: { taxonomy: Taxonomy; leaves: Matcher; categoryOf: Map<string, string> } | null = null;
function conceptBank() {
  if (bank) return bank;
  // The shipped taxonomy is the simulator's concept bank (read as loadTaxonomy() reads it).
  const taxonomy = Taxonomy.parse(JSON.parse(readFileSync(defaultTaxonomyPath(), 'utf8')));
  const nodes = taxonomy.categories.flatMap((c) => c.leaves.map((l) => ({ id: l.id, name: l.name, description: `${l.description} ${c.name}` })));
  const categoryOf = new Map(taxonomy.categories.flatMap((c) => c.leaves.map((l) => [l.id, c.id] as const)));
  return (bank = { taxonomy, leaves: createMatcher(nodes), categoryOf });
}

/** The bank leaf a text reads like, or null; `rng` (when given) may take the runner-up. */
function bankLeaf(text: string, rng: Rng | null, confusion: number): string | null {
  const ranked = conceptBank().leaves.rank(text);
  if (ranked.length === 0) return null;
  return rng && ranked.length > 1 && rng.chance(confusion) ? ranked[1]!.id : ranked[0]!.id;
}

const description = (d: Record<string, unknown>) => (typeof d.description === 'string' ? d.description : '');

// ---- assign --------------------------------------------------------------------------------

function assignTask(o: TaxonomySimOptions): TaxonomySimTask {
  return {
    name: 'taxonomy_assign',
    detect: (b) => hasOnly(b, [TAXONOMY_BLOCK.leaves, TAXONOMY_BLOCK.defects]),
    streamKey: (b) => sha(`${b.get(TAXONOMY_BLOCK.leaves)}\0${b.get(TAXONOMY_BLOCK.defects)}`),
    run({ request, modelName, blocks, rng }) {
      const leafBlock = blocks.get(TAXONOMY_BLOCK.leaves) ?? '';
      const leaves = parseJsonLines(leafBlock).filter((l) => typeof l.id === 'string');
      const defects = parseJsonLines(blocks.get(TAXONOMY_BLOCK.defects) ?? '').filter((d) => typeof d.key === 'string');
      if (leaves.length === 0 || defects.length === 0) return textReply('I cannot find a taxonomy and defects to label in the prompt.');
      const ids = leaves.map((l) => String(l.id));
      const taxKey = sha(leafBlock);
      const matcher = matcherFor(taxKey, () => createMatcher(leaves.map((l) => ({ id: String(l.id), name: String(l.name ?? ''), description: `${String(l.description ?? '')} ${String(l.category ?? '')}` }))));
      const assignments: Array<{ key: string; leaf_id: string }> = [];
      const notes: string[] = [];
      // Slips follow the whole prompt, so a retry (its note names the attempt) draws afresh.
      const slips = createRng(['taxonomy-assign-slips', rng.next(), sha(request.messages.map((m) => m.content).join('\0'))]);
      for (const d of defects) {
        const text = description(d);
        const stable = createRng(['taxonomy-assign', modelName, request.seed ?? null, taxKey, sha(text)]);
        const ranked = matcher.rank(text);
        // Nothing in common: a fixed but arbitrary leaf, as a model guessing would give.
        let leaf = ranked.length === 0 ? ids[stable.int(0, ids.length - 1)]! : ranked.length > 1 && stable.chance(o.confusion) ? ranked[1]!.id : ranked[0]!.id;
        const u = slips.next();
        if (u < o.omitRate) continue;
        if (u < o.omitRate + o.invalidRate) leaf = slips.pick([leaf.split('.')[0]!, leaf.replace('.', '/'), `${leaf}_general`, 'other']);
        assignments.push({ key: String(d.key), leaf_id: leaf });
        notes.push(`${String(d.key)} is about ${leaf}.`);
      }
      return { kind: 'json', value: { assignments }, notes };
    },
  };
}

// ---- grow ----------------------------------------------------------------------------------

// Rewordings that add no taxonomy vocabulary, so they still read like the node they copy.
const VARIANTS: ReadonlyArray<(name: string) => string> = [
  (n) => `${n} (another phrasing)`,
  (n) => `${n}: seen again`,
  (n) => `Variant: ${n.charAt(0).toLowerCase()}${n.slice(1)}`,
];

function parseTree(text: string | undefined): DraftTree | null {
  try {
    const r = DraftTree.safeParse(JSON.parse(text ?? ''));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

/** Bank leaf per draft leaf and bank category per draft category (by its leaves' majority). */
function mapTree(tree: DraftTree): { leafBank: Map<DraftLeaf, string | null>; catBank: Map<DraftCategory, string | null> } {
  const leafBank = new Map<DraftLeaf, string | null>();
  const catBank = new Map<DraftCategory, string | null>();
  const b = conceptBank();
  for (const c of tree.categories) {
    const votes = new Map<string, number>();
    for (const l of c.subcategories) {
      const id = bankLeaf(`${l.name}. ${l.description}`, null, 0);
      leafBank.set(l, id);
      if (id) votes.set(b.categoryOf.get(id)!, (votes.get(b.categoryOf.get(id)!) ?? 0) + 1);
    }
    let best: string | null = null;
    for (const [k, v] of votes) if (best === null || v > votes.get(best)!) best = k;
    catBank.set(c, best ?? b.taxonomy.categories.find((bc) => bc.name === c.name)?.id ?? null);
  }
  return { leafBank, catBank };
}

function growTask(o: TaxonomySimOptions): TaxonomySimTask {
  return {
    name: 'taxonomy_grow',
    detect: (b) => hasOnly(b, [TAXONOMY_BLOCK.current, TAXONOMY_BLOCK.batch]),
    streamKey: (b) => sha(`${b.get(TAXONOMY_BLOCK.current)}\0${b.get(TAXONOMY_BLOCK.batch)}`),
    run({ request, modelName, blocks, rng }) {
      const tree = parseTree(blocks.get(TAXONOMY_BLOCK.current));
      if (!tree) return textReply('The current taxonomy block is not a taxonomy I can read.');
      const b = conceptBank();
      const { leafBank, catBank } = mapTree(tree);
      const notes: string[] = [];
      for (const d of parseJsonLines(blocks.get(TAXONOMY_BLOCK.batch) ?? '')) {
        const stable = createRng(['taxonomy-grow', modelName, request.seed ?? null, sha(description(d))]);
        const target = bankLeaf(description(d), stable, o.confusion);
        if (!target) continue; // nothing to say about it: a model would leave the tree alone
        const fits = [...leafBank.values()].includes(target);
        if (fits && !stable.chance(o.missFit)) continue;
        const bankCat = b.taxonomy.categories.find((c) => c.id === b.categoryOf.get(target))!;
        const bankLeafNode = bankCat.leaves.find((l) => l.id === target)!;
        let home = tree.categories.find((c) => catBank.get(c) === bankCat.id);
        if (!home) {
          home = { name: bankCat.name, description: bankCat.description, subcategories: [] };
          tree.categories.push(home);
          catBank.set(home, bankCat.id);
        }
        const leaf: DraftLeaf = { name: fits ? stable.pick(VARIANTS)(bankLeafNode.name) : bankLeafNode.name, description: bankLeafNode.description };
        if (home.subcategories.some((s) => s.name === leaf.name)) continue;
        home.subcategories.push(leaf);
        leafBank.set(leaf, target);
        notes.push(`Added "${leaf.name}" under "${home.name}".`);
      }
      // Now and then a model forgets a node it was told to keep.
      if (rng.chance(o.dropNode)) {
        const withLeaves = tree.categories.filter((c) => c.subcategories.length > 1);
        if (withLeaves.length > 0) {
          const c = rng.pick(withLeaves);
          c.subcategories.splice(rng.int(0, c.subcategories.length - 1), 1);
        }
      }
      return { kind: 'json', value: { taxonomy: tree }, notes };
    },
  };
}

// ---- consolidate ---------------------------------------------------------------------------

function consolidateTask(): TaxonomySimTask {
  return {
    name: 'taxonomy_consolidate',
    detect: (b) => hasOnly(b, [TAXONOMY_BLOCK.draft]),
    streamKey: (b) => sha(b.get(TAXONOMY_BLOCK.draft) ?? ''),
    run({ blocks }) {
      const tree = parseTree(blocks.get(TAXONOMY_BLOCK.draft));
      if (!tree) return textReply('The draft taxonomy block is not a taxonomy I can read.');
      const b = conceptBank();
      const { leafBank, catBank } = mapTree(tree);
      // Categories that read like the same bank category become one (the first one's wording).
      type Group = { name: string; description: string; leaves: Array<{ name: string; description: string; merged_from: string[] }> };
      const groups = new Map<string, Group>();
      const groupOfCategory = new Map<DraftCategory, Group>();
      for (const c of tree.categories) {
        const key = catBank.get(c) ?? `own:${c.name}`;
        let g = groups.get(key);
        if (!g) groups.set(key, (g = { name: c.name, description: c.description, leaves: [] }));
        groupOfCategory.set(c, g);
      }
      // Leaves that read like the same bank leaf become one, homed with that leaf's category.
      const kept = new Map<string, Group['leaves'][number]>();
      for (const c of tree.categories) {
        for (const l of c.subcategories) {
          const id = leafBank.get(l) ?? null;
          const key = id ?? `own:${c.name}/${l.name}`;
          const prev = kept.get(key);
          if (prev) {
            if (prev.name !== l.name) prev.merged_from.push(l.name);
            continue;
          }
          const entry = { name: l.name, description: l.description, merged_from: [] as string[] };
          kept.set(key, entry);
          const home = (id && groups.get(b.categoryOf.get(id)!)) || groupOfCategory.get(c)!;
          home.leaves.push(entry);
        }
      }
      const categories = [...groups.values()].filter((g) => g.leaves.length > 0).map((g) => ({ name: g.name, description: g.description, subcategories: g.leaves }));
      return { kind: 'json', value: { categories }, notes: [`${kept.size} subcategories after merging.`] };
    },
  };
}

/** The three tasks; tests pass options to force slips. */
export function createTaxonomyTasks(opts: Partial<TaxonomySimOptions> = {}): TaxonomySimTask[] {
  const o = { ...DEFAULT_TAXONOMY_SIM, ...opts };
  return [assignTask(o), growTask(o), consolidateTask()];
}

export const TAXONOMY_TASKS: readonly TaxonomySimTask[] = createTaxonomyTasks();
