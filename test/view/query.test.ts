/**
 * The records table's filters and sorts agree with a plain comparator over the same records,
 * including ties (kept in index order), costs equal to many digits and unknown costs.
 */
import { describe, expect, it } from 'vitest';
import { RecordQuery, SORT_KEYS, type Filter } from '../../src/view/query.js';
import { RecordIndex } from '../../src/view/record-index.js';
import { createRng } from '../../src/util/prng.js';

function index(n: number): RecordIndex {
  const rng = createRng(['view-query']);
  const ix = new RecordIndex(n);
  const cats = ['', 'logic', 'computation,logic', 'computation'];
  for (let i = 0; i < n; i++) {
    ix.ids.push(`r-${String(rng.int(0, n * 3)).padStart(6, '0')}`);
    ix.decision[i] = rng.int(0, 2);
    ix.rule[i] = ix.rules.id(['', 'fatal_defect', 'some_dissent'][rng.int(0, 2)]!);
    ix.impact[i] = rng.int(-1, 3);
    ix.defects[i] = rng.int(0, 5);
    ix.jurorsOk[i] = rng.int(1, 3);
    ix.jurorsTotal[i] = 3;
    ix.dissent[i] = rng.int(0, 2);
    ix.degraded[i] = rng.chance(0.1) ? 1 : 0;
    // Costs that differ only in the 9th digit, repeated ones and unknown ones.
    ix.cost[i] = rng.chance(0.05) ? Number.NaN : rng.chance(0.3) ? 0.0123456 + rng.int(0, 3) * 1e-9 : rng.next() / 10;
    ix.categories[i] = ix.categorySets.id(cats[rng.int(0, 3)]!);
    ix.reviewed[i] = rng.chance(0.1) ? rng.int(1, 2) : 0;
  }
  ix.n = ix.ready = n;
  return ix;
}

/** The key each sort uses, as a plain comparable value (unknown cost: the highest). */
function plainKey(ix: RecordIndex, key: (typeof SORT_KEYS)[number], i: number): number | string {
  switch (key) {
    case 'id': return ix.ids[i]!;
    case 'decision': return ix.decision[i]!;
    case 'rule': return ix.rules.values[ix.rule[i]!]!;
    case 'severity': return ix.impact[i]!;
    case 'defects': return ix.defects[i]!;
    case 'jurors': return ix.jurorsOk[i]! * 1000 + ix.jurorsTotal[i]!;
    case 'dissent': return ix.dissent[i]!;
    case 'categories': return ix.categorySets.values[ix.categories[i]!]!;
    case 'degraded': return ix.degraded[i]!;
    case 'reviewed': return ix.reviewed[i]!;
    case 'cost': return Number.isNaN(ix.cost[i]!) ? Number.POSITIVE_INFINITY : ix.cost[i]!;
  }
}

describe('record query', () => {
  const ix = index(5000);
  const q = new RecordQuery(ix);

  it.each(SORT_KEYS.flatMap((k) => [[k, 'asc'], [k, 'desc']] as const))('sort %s %s: the plain comparator\'s order, ties by position', (key, dir) => {
    const got = Array.from(q.rows({ sort: key, dir }, null));
    const want = Array.from({ length: ix.n }, (_, i) => i).sort((a, b) => {
      const x = plainKey(ix, key, a);
      const y = plainKey(ix, key, b);
      const c = x < y ? -1 : x > y ? 1 : 0;
      return (dir === 'desc' ? -c : c) || a - b;
    });
    expect(got).toEqual(want);
  });

  it('filters combine, and a text search answer narrows them', () => {
    const f: Filter = { decision: 'drop', category: 'logic', degraded: 'no', severity: 'major' };
    const want = Array.from({ length: ix.n }, (_, i) => i).filter(
      (i) => ix.decision[i] === 1 && ix.categorySets.values[ix.categories[i]!]!.split(',').includes('logic') && ix.degraded[i] === 0 && ix.impact[i] === 2,
    );
    expect(want.length).toBeGreaterThan(10);
    expect(Array.from(q.rows(f, null))).toEqual(want);
    const hits = new Uint8Array(ix.n);
    for (const i of want.slice(0, 5)) hits[i] = 1;
    expect(Array.from(q.rows({ ...f, q: 'x' }, hits))).toEqual(want.slice(0, 5));
    expect(Array.from(q.rows({ defects: 'any', jurors: 'short', dissent: 'no' }, null))).toEqual(
      Array.from({ length: ix.n }, (_, i) => i).filter((i) => ix.defects[i]! > 0 && ix.jurorsOk[i]! < ix.jurorsTotal[i]! && ix.dissent[i] === 0),
    );
    expect(Array.from(q.rows({ rule: '(default)', reviewed: 'yes' }, null))).toEqual(Array.from({ length: ix.n }, (_, i) => i).filter((i) => ix.rule[i] === 0 && ix.reviewed[i]! > 0));
  });
});
