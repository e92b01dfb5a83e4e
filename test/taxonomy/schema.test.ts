import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadTaxonomy, parseTaxonomy, TaxonomyError, TaxonomyIndex } from '../../src/taxonomy/schema.js';

describe('the shipped default taxonomy (paper App. J)', () => {
  const t = loadTaxonomy();

  it('has the 8 categories and 56 leaves, with the per-category counts of the paper', () => {
    expect(t.categories.map((c) => c.name)).toEqual([
      'Computation & algebraic manipulation',
      'Logical reasoning',
      'Combinatorial/Structural reasoning',
      'Geometric/Spatial reasoning',
      'Problem interpretation',
      'Proof methodology and rigor',
      'Self-monitoring and error-handling',
      'Output/generation failures',
    ]);
    expect(t.categories.map((c) => c.leaves.length)).toEqual([8, 8, 6, 7, 6, 8, 7, 6]);
    expect(new TaxonomyIndex(t).leafCount).toBe(56);
  });

  it('names the paper leaves, and every node has its own one-line description', () => {
    const names = t.categories.flatMap((c) => c.leaves.map((l) => l.name));
    for (const n of ['Numerical calculation error', 'Extended reasoning on an uncorrected false premise', 'Truncated or incomplete solution', 'Unproven assumptions used as established facts', 'Double-counting or overcounting', 'Reversing direction of inequality or bound']) {
      expect(names).toContain(n);
    }
    for (const c of t.categories) {
      expect(c.description.length).toBeGreaterThan(20);
      for (const l of c.leaves) {
        expect(l.description.length, l.id).toBeGreaterThan(20);
        expect(l.description.toLowerCase()).not.toBe(l.name.toLowerCase());
        expect(l.description).not.toMatch(/\n/);
      }
    }
  });

  it('ids are unique, stable-looking and prefixed by their category', () => {
    const index = new TaxonomyIndex(t);
    expect(index.leaf('computation.sign')?.category.id).toBe('computation');
    expect(index.leaf('self_monitoring.uncorrected_false_premise')?.leaf.name).toBe('Extended reasoning on an uncorrected false premise');
    for (const [id, e] of index.leaves) expect(id.startsWith(`${e.category.id}.`)).toBe(true);
  });
});

describe('user taxonomies are checked', () => {
  const base = { version: 1, name: 'mine', categories: [{ id: 'a', name: 'A', description: 'd', leaves: [{ id: 'a.x', name: 'X', description: 'd' }] }] };

  it('accepts a minimal valid file', () => {
    expect(parseTaxonomy(base).categories[0]!.leaves[0]!.id).toBe('a.x');
  });

  it('rejects duplicate ids, leaves outside their category prefix, deeper nesting and empty categories', () => {
    const dup = { ...base, categories: [base.categories[0], { ...base.categories[0], leaves: [{ id: 'a.y', name: 'Y', description: '' }] }] };
    expect(() => parseTaxonomy(dup)).toThrow(/duplicate id "a"/);
    const prefix = { ...base, categories: [{ ...base.categories[0], leaves: [{ id: 'b.x', name: 'X', description: '' }] }] };
    expect(() => parseTaxonomy(prefix)).toThrow(/must start with its category id "a\."/);
    const deep = { ...base, categories: [{ ...base.categories[0], leaves: [{ id: 'a.x', name: 'X', description: '', leaves: [] }] }] };
    expect(() => parseTaxonomy(deep)).toThrow(TaxonomyError);
    const empty = { ...base, categories: [{ ...base.categories[0], leaves: [] }] };
    expect(() => parseTaxonomy(empty)).toThrow(/leaves/);
    expect(() => parseTaxonomy({ ...base, categories: [{ ...base.categories[0], id: 'Bad Id' }] })).toThrow(/lower_snake_case/);
  });

  it('load errors name the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rj-tax-'));
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{ not json');
    expect(() => loadTaxonomy(bad)).toThrow(new RegExp(`${bad}.*not valid JSON`));
    expect(() => loadTaxonomy(join(dir, 'missing.json'))).toThrow(/ENOENT/);
  });
});
