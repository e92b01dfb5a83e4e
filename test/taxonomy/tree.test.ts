import { describe, expect, it } from 'vitest';
import { freezeTree, mergeGrown, reconcileConsolidation, slug } from '../../src/induce/tree.js';
import { parseTaxonomy } from '../../src/taxonomy/schema.js';
import type { DraftTree } from '../../src/taxonomy/wire.js';

const prev: DraftTree = {
  categories: [
    { name: 'Arithmetic', description: 'Sums.', subcategories: [{ name: 'Sign error', description: 'Flipped sign.' }, { name: 'Carry error', description: 'Lost a carry.' }] },
    { name: 'Logic', description: 'Inference.', subcategories: [{ name: 'Converse', description: 'Used the converse.' }] },
  ],
};

describe('grow keeps everything verbatim and only accretes', () => {
  it('a reply that rewords, drops and moves nodes changes nothing that existed; new names are appended', () => {
    const reply: DraftTree = {
      categories: [
        { name: 'arithmetic', description: 'REWRITTEN', subcategories: [{ name: 'Sign error', description: 'REWRITTEN' }, { name: 'Rounding', description: 'Rounded early.' }] },
        // "Converse" moved under a new category, "Carry error" dropped, one empty new category.
        { name: 'Reasoning', description: 'New.', subcategories: [{ name: 'Converse', description: 'x' }, { name: 'Circular proof', description: 'Assumes the claim.' }] },
        { name: 'Empty', description: '', subcategories: [] },
      ],
    };
    const m = mergeGrown(prev, reply);
    // The old nodes are untouched (names and descriptions verbatim), in their old places.
    expect({ ...m.tree.categories[0]!, subcategories: m.tree.categories[0]!.subcategories.slice(0, 2) }).toEqual(prev.categories[0]);
    expect(m.tree.categories[1]).toEqual(prev.categories[1]);
    expect(m.tree.categories.map((c) => c.name)).toEqual(['Arithmetic', 'Logic', 'Reasoning']);
    expect(m.tree.categories[0]!.subcategories.map((s) => s.name)).toEqual(['Sign error', 'Carry error', 'Rounding']);
    expect(m.tree.categories[2]!.subcategories.map((s) => s.name)).toEqual(['Circular proof']);
    expect(m.added).toBe(3); // Rounding, the Reasoning category, Circular proof
    expect(m.restored).toBeGreaterThanOrEqual(2); // Carry error dropped, Logic missing
    expect(prev.categories[0]!.subcategories).toHaveLength(2); // input untouched
  });

  it('the same node twice in one reply is added once', () => {
    const m = mergeGrown({ categories: [] }, { categories: [{ name: 'A', description: '', subcategories: [{ name: 'X', description: '' }, { name: 'x ', description: '' }] }, { name: 'B', description: '', subcategories: [{ name: 'X', description: '' }] }] });
    expect(m.tree.categories).toEqual([{ name: 'A', description: '', subcategories: [{ name: 'X', description: '' }] }]);
  });
});

describe('consolidation is reconciled against the grown tree', () => {
  it('merged names are covered, lost leaves come back, duplicates fold, empty categories go', () => {
    const r = reconcileConsolidation(prev, {
      categories: [
        { name: 'Arithmetic', description: 'Sums.', subcategories: [{ name: 'Sign error', description: 'Flipped sign.', merged_from: ['Carry error'] }] },
        { name: 'Arithmetic', description: 'dup', subcategories: [{ name: 'sign error', description: 'again', merged_from: ['Something else'] }] },
        { name: 'Nothing', description: '', subcategories: [] },
      ],
    });
    expect(r.tree.categories.map((c) => c.name)).toEqual(['Arithmetic', 'Logic']);
    expect(r.tree.categories[0]!.subcategories).toEqual([{ name: 'Sign error', description: 'Flipped sign.' }]);
    expect(r.restored).toEqual(['Converse']);
    expect(r.merges).toEqual([{ into: 'Sign error', from: ['Carry error', 'Something else'] }]);
  });
});

describe('freezing gives stable, valid ids', () => {
  it('ids come from names, collisions get suffixes, and the result is a valid taxonomy', () => {
    const tree: DraftTree = {
      categories: [
        { name: 'Proof & rigor', description: '', subcategories: [{ name: 'Gap in proof!', description: '' }, { name: 'Gap in proof?', description: '' }] },
        { name: 'Proof — rigor', description: '', subcategories: [{ name: 'Ünïcode naïve step', description: '' }] },
      ],
    };
    const t = freezeTree(tree, 'n', {});
    expect(t.categories.map((c) => c.id)).toEqual(['proof_rigor', 'proof_rigor_2']);
    expect(freezeTree({ categories: [{ name: 'Computation & algebraic manipulation', description: '', subcategories: [{ name: 'x', description: '' }] }] }, 'n', {}).categories[0]!.id).toBe('computation_algebraic');
    expect(t.categories[0]!.leaves.map((l) => l.id)).toEqual(['proof_rigor.gap_proof', 'proof_rigor.gap_proof_2']);
    expect(t.categories[1]!.leaves[0]!.id).toBe('proof_rigor_2.unicode_naive_step');
    expect(parseTaxonomy(t)).toEqual(t);
    expect(freezeTree(tree, 'n', {})).toEqual(t); // same tree, same ids
  });

  it('slug is short, ASCII and never empty', () => {
    expect(slug('A very long name '.repeat(10)).length).toBeLessThanOrEqual(40);
    expect(slug('!!!')).toBe('node');
    expect(slug('Sign  error')).toBe('sign_error');
    expect(slug('Misusing a previously computed or given value')).toBe('misusing_previously_computed_given_value');
    expect(slug('Of the')).toBe('of_the'); // only filler: keep it rather than nothing
  });
});
