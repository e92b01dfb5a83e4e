/**
 * Filters, sorts and pages the record index. A filter is one pass over typed columns; a sort
 * packs (key, position) into one float per record and uses the engine's numeric sort, so a
 * million records sort without a comparator call each. The last few results are kept, so paging
 * and next / previous within a filter cost nothing.
 */
import { FILTER_DECISIONS, IMPACTS_ORDER } from './schema-bits.js';
import type { RecordIndex } from './record-index.js';

export const SORT_KEYS = ['id', 'decision', 'rule', 'severity', 'defects', 'jurors', 'dissent', 'categories', 'degraded', 'cost', 'reviewed'] as const;
export type SortKey = (typeof SORT_KEYS)[number];

export interface Filter {
  decision?: string;
  rule?: string;
  /** `none` or a severity: the record's max severity */
  severity?: string;
  category?: string;
  degraded?: 'yes' | 'no';
  reviewed?: 'yes' | 'no';
  /** `none`: no consensus defect; `any`: at least one */
  defects?: 'none' | 'any';
  /** `all`: every seated juror judged; `short`: some failed (or no verdict) */
  jurors?: 'all' | 'short';
  /** any dissenting finding */
  dissent?: 'yes' | 'no';
  q?: string;
  sort?: SortKey;
  dir?: 'asc' | 'desc';
}

const FILTER_KEYS = ['decision', 'rule', 'severity', 'category', 'degraded', 'reviewed', 'defects', 'jurors', 'dissent', 'q', 'sort', 'dir'] as const;
const CHOICES: Partial<Record<(typeof FILTER_KEYS)[number], readonly string[]>> = {
  degraded: ['yes', 'no'],
  reviewed: ['yes', 'no'],
  dissent: ['yes', 'no'],
  defects: ['none', 'any'],
  jurors: ['all', 'short'],
};

/** The filter of a query string; values it does not know are a mistake the caller is told about. */
export function parseFilter(p: URLSearchParams): Filter {
  const f: Filter = {};
  for (const k of FILTER_KEYS) {
    const v = p.get(k);
    if (v === null || v === '') continue;
    if (k === 'decision' && !(FILTER_DECISIONS as readonly string[]).includes(v)) throw new RangeError(`decision must be keep, drop or review`);
    if (k === 'severity' && v !== 'none' && !(IMPACTS_ORDER as readonly string[]).includes(v)) throw new RangeError(`severity must be none, ${IMPACTS_ORDER.join(', ')}`);
    const choices = CHOICES[k];
    if (choices && !choices.includes(v)) throw new RangeError(`${k} must be ${choices.join(' or ')}`);
    if (k === 'sort' && !(SORT_KEYS as readonly string[]).includes(v)) throw new RangeError(`sort must be one of ${SORT_KEYS.join(', ')}`);
    if (k === 'dir' && v !== 'asc' && v !== 'desc') throw new RangeError('dir must be asc or desc');
    (f as Record<string, string>)[k] = k === 'q' ? v.slice(0, 500) : v;
  }
  return f;
}

export const filterKey = (f: Filter): string => FILTER_KEYS.map((k) => `${k}=${f[k] ?? ''}`).join('&');

/** Positions of the records `f` keeps, in index order; `hits` is the text search's answer. */
function select(ix: RecordIndex, f: Filter, hits: Uint8Array | null): Uint32Array {
  const decision = f.decision ? FILTER_DECISIONS.indexOf(f.decision as never) : -2;
  const rule = f.rule === undefined ? -2 : f.rule === '(default)' ? 0 : ix.rules.values.indexOf(f.rule);
  const severity = f.severity === undefined ? -2 : f.severity === 'none' ? -1 : IMPACTS_ORDER.indexOf(f.severity as never);
  const catOk = f.category === undefined ? null : ix.categorySets.values.map((s) => s.split(',').includes(f.category!));
  const degraded = f.degraded === undefined ? -1 : f.degraded === 'yes' ? 1 : 0;
  const reviewed = f.reviewed === undefined ? -1 : f.reviewed === 'yes' ? 1 : 0;
  const defects = f.defects === undefined ? -1 : f.defects === 'any' ? 1 : 0;
  const jurorsShort = f.jurors === undefined ? -1 : f.jurors === 'short' ? 1 : 0;
  const dissent = f.dissent === undefined ? -1 : f.dissent === 'yes' ? 1 : 0;
  const out = new Uint32Array(ix.ready);
  let k = 0;
  for (let i = 0; i < ix.ready; i++) {
    if (decision !== -2 && ix.decision[i] !== decision) continue;
    if (rule !== -2 && ix.rule[i] !== rule) continue;
    if (severity !== -2 && ix.impact[i] !== severity) continue;
    if (catOk && !catOk[ix.categories[i]!]) continue;
    if (degraded >= 0 && ix.degraded[i] !== degraded) continue;
    if (reviewed >= 0 && (ix.reviewed[i]! > 0 ? 1 : 0) !== reviewed) continue;
    if (defects >= 0 && (ix.defects[i]! > 0 ? 1 : 0) !== defects) continue;
    if (jurorsShort >= 0 && (ix.jurorsOk[i]! < ix.jurorsTotal[i]! || ix.failed[i] === 1 ? 1 : 0) !== jurorsShort) continue;
    if (dissent >= 0 && (ix.dissent[i]! > 0 ? 1 : 0) !== dissent) continue;
    if (hits && !hits[i]) continue;
    out[k++] = i;
  }
  return out.slice(0, k);
}

/** Rank of each string of `values` in sorted order (ties share a rank). */
function ranks(values: readonly string[]): Uint32Array {
  const order = values.map((_, i) => i).sort((a, b) => (values[a]! < values[b]! ? -1 : values[a]! > values[b]! ? 1 : 0));
  const rank = new Uint32Array(values.length);
  order.forEach((i, r) => (rank[i] = r > 0 && values[order[r - 1]!] === values[i] ? rank[order[r - 1]!]! : r));
  return rank;
}

/** Integer sort keys per record, computed when first asked for (ids and costs need a sort of their own). */
export class SortKeys {
  private readonly cache = new Map<SortKey, (i: number) => number>();
  /** the index size the cached keys were made for: ranks change as ranges are added */
  private size = -1;
  constructor(private readonly ix: RecordIndex) {}

  of(key: SortKey): (i: number) => number {
    if (this.size !== this.ix.ready) this.cache.clear(), (this.size = this.ix.ready);
    let fn = this.cache.get(key);
    if (!fn) this.cache.set(key, (fn = this.make(key)));
    return fn;
  }

  private make(key: SortKey): (i: number) => number {
    const ix = this.ix;
    switch (key) {
      case 'id': {
        const r = ranks(ix.ids.slice(0, ix.ready));
        return (i) => r[i]!;
      }
      case 'decision': return (i) => ix.decision[i]!;
      case 'rule': {
        const r = ranks(ix.rules.values);
        return (i) => r[ix.rule[i]!]!;
      }
      case 'severity': return (i) => ix.impact[i]! + 1;
      case 'defects': return (i) => ix.defects[i]!;
      case 'jurors': return (i) => ix.jurorsOk[i]! * 65536 + ix.jurorsTotal[i]!;
      case 'dissent': return (i) => ix.dissent[i]!;
      case 'categories': {
        const r = ranks(ix.categorySets.values);
        return (i) => r[ix.categories[i]!]!;
      }
      case 'degraded': return (i) => ix.degraded[i]!;
      case 'reviewed': return (i) => ix.reviewed[i]!;
      case 'cost':
        return (i) => costHighWord(ix.cost[i]!);
    }
  }
}

const word = new DataView(new ArrayBuffer(8));
/** A cost's sort key: the high 32 bits of a non-negative double order like the double (to 1 part in 10^6); unknown (NaN) as the highest. */
function costHighWord(cost: number): number {
  if (Number.isNaN(cost)) return 0xffffffff;
  word.setFloat64(0, cost);
  return word.getUint32(0);
}

/**
 * Orders `rows` by `key` (ties by index order), packing key and position into one float each.
 * `exact` orders records whose keys tie but whose values differ (costs equal to six digits).
 */
function sortRows(rows: Uint32Array, n: number, keyOf: (i: number) => number, desc: boolean, exact?: (i: number) => number): Uint32Array {
  const bits = Math.max(1, Math.ceil(Math.log2(n + 1)));
  const scale = 2 ** bits;
  const keys = new Float64Array(rows.length);
  let max = 0;
  for (let k = 0; k < rows.length; k++) max = Math.max(max, (keys[k] = keyOf(rows[k]!)));
  const packed = keys;
  for (let k = 0; k < rows.length; k++) packed[k] = (desc ? max - keys[k]! : keys[k]!) * scale + rows[k]!;
  packed.sort();
  const out = new Uint32Array(rows.length);
  for (let k = 0; k < packed.length; k++) out[k] = packed[k]! % scale;
  if (exact) refineTies(out, packed, scale, exact, desc);
  return out;
}

function refineTies(out: Uint32Array, packed: Float64Array, scale: number, exact: (i: number) => number, desc: boolean): void {
  for (let a = 0; a < out.length; ) {
    let b = a + 1;
    while (b < out.length && Math.floor(packed[b]! / scale) === Math.floor(packed[a]! / scale)) b++;
    if (b - a > 1) {
      const run = Array.from(out.subarray(a, b)).sort((x, y) => (desc ? exact(y) - exact(x) : exact(x) - exact(y)) || x - y);
      out.set(run, a);
    }
    a = b;
  }
}

/** The filtered, sorted positions; the last few answers are kept. */
export class RecordQuery {
  readonly keys: SortKeys;
  private readonly recent = new Map<string, Uint32Array>();

  constructor(private readonly ix: RecordIndex) {
    this.keys = new SortKeys(ix);
  }

  /** Forget every kept answer (a review changed what `reviewed` selects). */
  invalidate(): void {
    this.recent.clear();
  }

  rows(f: Filter, hits: Uint8Array | null): Uint32Array {
    const key = `${filterKey(f)}#${this.ix.ready}`;
    const had = this.recent.get(key);
    if (had) return had;
    let rows = select(this.ix, f, hits);
    if (f.sort) {
      const desc = f.dir === 'desc';
      // An unknown cost sorts as the highest: last ascending, first descending (unknown ones by position).
      const exact = f.sort === 'cost' ? (i: number) => this.ix.cost[i]! : undefined;
      rows = sortRows(rows, this.ix.ready, this.keys.of(f.sort), desc, exact);
    }
    this.recent.set(key, rows);
    if (this.recent.size > 8) this.recent.delete(this.recent.keys().next().value!);
    return rows;
  }
}
