/**
 * What the records table shows and filters on, for every committed record, as typed columns:
 * about 100 bytes a record, so a million fit in well under the viewer's memory budget. Built once
 * from the files the manifests list, reading only the columns it needs (verdicts, decisions and
 * the defects' categories); the rest of a record is read when it is opened (./record-detail.ts).
 */
import { FILTER_DECISIONS, IMPACTS_ORDER, type CommitManifest, type FileFormat, type ManifestTableName, type ReviewRow } from './schema-bits.js';
import { ruleOfReason } from '../derive/corpus.js';
import type { ObjectStore } from '../pipeline/storage/object-store.js';
import { latestReviews, readReviews } from '../pipeline/commit/reviews.js';
import { listCommitted } from '../pipeline/commit/shard-commit.js';
import { readColumns, type Columns } from './columns.js';

/** A range's file of one table, Parquet preferred (every format holds the same rows). */
export function partOf(m: CommitManifest, table: ManifestTableName): { key: string; format: FileFormat }[] {
  const files = m.files.filter((f) => f.table === table);
  const format = files.some((f) => f.format === 'parquet') ? 'parquet' : files[0]?.format;
  return files.filter((f) => f.format === format).map((f) => ({ key: f.key, format: f.format }));
}

/** Interns strings to small numbers (rules, category sets). */
class Dict {
  readonly values: string[] = [];
  private readonly ids = new Map<string, number>();
  id(v: string): number {
    let i = this.ids.get(v);
    if (i === undefined) this.ids.set(v, (i = this.values.length)), this.values.push(v);
    return i;
  }
}

export const NO_REVIEW = 0;

export class RecordIndex {
  /** records written so far (the build adds them range by range) */
  n = 0;
  /** records of the ranges fully read: what queries see while the index is being built */
  ready = 0;
  readonly ids: string[] = [];
  readonly manifests: CommitManifest[] = [];
  /** first position of each range (a range's records are contiguous) */
  readonly starts: number[] = [];
  range: Uint32Array;
  decision: Uint8Array;
  /** rule id in `rules` (0: no rule matched, the policy's default) */
  rule: Uint16Array;
  readonly rules = new Dict();
  /** max severity: -1 none, else the index in IMPACTS_ORDER */
  impact: Int8Array;
  defects: Int32Array;
  jurorsOk: Uint16Array;
  jurorsTotal: Uint16Array;
  dissent: Int32Array;
  degraded: Uint8Array;
  /** no verdict could be formed (`error` set) */
  failed: Uint8Array;
  /** NaN: unknown (an unpriced model) */
  cost: Float64Array;
  /** the record's categories, as an id in `categorySets` ("" for none; sorted, comma-joined) */
  categories: Uint32Array;
  readonly categorySets = new Dict();
  /** 0: not reviewed, else 1 + the index of the reviewed decision in FILTER_DECISIONS */
  reviewed: Uint8Array;
  readonly reviews = new Map<string, ReviewRow>();

  constructor(capacity: number) {
    this.range = new Uint32Array(capacity);
    this.decision = new Uint8Array(capacity);
    this.rule = new Uint16Array(capacity);
    this.impact = new Int8Array(capacity);
    this.defects = new Int32Array(capacity);
    this.jurorsOk = new Uint16Array(capacity);
    this.jurorsTotal = new Uint16Array(capacity);
    this.dissent = new Int32Array(capacity);
    this.degraded = new Uint8Array(capacity);
    this.failed = new Uint8Array(capacity);
    this.cost = new Float64Array(capacity);
    this.categories = new Uint32Array(capacity);
    this.reviewed = new Uint8Array(capacity);
    this.rules.id('');
    this.categorySets.id('');
  }

  /** Position of a record id (first one when an output kept duplicates), or -1. */
  find(id: string): number {
    const i = this.ids.indexOf(id);
    return i < this.ready ? i : -1;
  }

  applyReview(r: ReviewRow): void {
    this.reviews.set(r.record_id, r);
    const d = FILTER_DECISIONS.indexOf(r.decision) + 1;
    for (let i = this.ids.indexOf(r.record_id); i >= 0 && i < this.n; i = this.ids.indexOf(r.record_id, i + 1)) this.reviewed[i] = d;
  }
}

const VERDICT_COLUMNS = ['record_id', 'jurors_total', 'jurors_ok', 'n_defects', 'max_impact', 'n_dissent', 'degraded', 'error', 'cost_usd'];

async function tableColumns(store: ObjectStore, m: CommitManifest, table: ManifestTableName, names: string[]): Promise<Columns> {
  const merged: Columns = Object.fromEntries(names.map((n) => [n, []]));
  for (const p of partOf(m, table)) {
    const bytes = await store.get(p.key);
    if (!bytes) throw new Error(`committed file missing: ${store.locate(p.key)} (listed in _commits/${m.first}-${m.last}.json)`);
    const cols = await readColumns(bytes, p.format, names);
    for (const n of names) for (const v of cols[n]!) merged[n]!.push(v);
  }
  return merged;
}

/** Adds one range's records, joining decisions and categories to verdicts by record id. */
async function addRange(ix: RecordIndex, store: ObjectStore, m: CommitManifest, r: number): Promise<void> {
  const [v, d, def] = await Promise.all([
    tableColumns(store, m, 'verdicts', VERDICT_COLUMNS),
    tableColumns(store, m, 'decisions', ['record_id', 'decision', 'reason']),
    tableColumns(store, m, 'defects', ['record_id', 'category_id']),
  ]);
  const decisionOf = new Map<string, number>();
  d.record_id!.forEach((id, i) => decisionOf.set(String(id), i));
  const cats = new Map<string, Set<string>>();
  def.record_id!.forEach((id, i) => {
    const c = def.category_id![i];
    if (typeof c !== 'string' || c === '') return;
    let s = cats.get(String(id));
    if (!s) cats.set(String(id), (s = new Set()));
    s.add(c);
  });
  const ids = v.record_id!;
  for (let i = 0; i < ids.length; i++) {
    const id = String(ids[i]);
    const at = ix.n++;
    ix.ids.push(id);
    ix.range[at] = r;
    const di = decisionOf.get(id);
    ix.decision[at] = di === undefined ? 255 : FILTER_DECISIONS.indexOf(d.decision![di] as never);
    const rule = di === undefined ? null : ruleOfReason(String(d.reason![di]));
    ix.rule[at] = rule === null ? 0 : ix.rules.id(rule);
    const impact = v.max_impact![i];
    ix.impact[at] = typeof impact === 'string' ? IMPACTS_ORDER.indexOf(impact as never) : -1;
    ix.defects[at] = Number(v.n_defects![i] ?? 0);
    ix.jurorsOk[at] = Number(v.jurors_ok![i] ?? 0);
    ix.jurorsTotal[at] = Number(v.jurors_total![i] ?? 0);
    ix.dissent[at] = Number(v.n_dissent![i] ?? 0);
    ix.degraded[at] = v.degraded![i] ? 1 : 0;
    ix.failed[at] = v.error![i] ? 1 : 0;
    const cost = v.cost_usd![i];
    ix.cost[at] = typeof cost === 'number' ? cost : Number.NaN;
    const set = cats.get(id);
    ix.categories[at] = set ? ix.categorySets.id([...set].sort().join(',')) : 0;
  }
}

export interface BuildProgress {
  /** the index, once its size is known: it grows range by range and can be queried meanwhile */
  onStart?(ix: RecordIndex, ranges: number): void;
  onRange?(done: number, total: number): void;
}

/** Reads every committed range of `store` (and its reviews) into an index. */
export async function buildIndex(store: ObjectStore, progress: BuildProgress = {}): Promise<RecordIndex> {
  const manifests = await listCommitted(store);
  const ix = new RecordIndex(manifests.reduce((a, m) => a + (m.rows.verdicts ?? 0), 0));
  for (const [id, r] of latestReviews(await readReviews(store))) ix.reviews.set(id, r);
  progress.onStart?.(ix, manifests.length);
  for (const [r, m] of manifests.entries()) {
    const from = ix.n;
    await addRange(ix, store, m, r);
    for (let i = from; i < ix.n; i++) {
      const review = ix.reviews.get(ix.ids[i]!);
      if (review) ix.reviewed[i] = FILTER_DECISIONS.indexOf(review.decision) + 1;
    }
    // Published only once the range's rows are all in: a query meanwhile sees whole ranges.
    ix.manifests.push(m);
    ix.starts.push(from);
    ix.ready = ix.n;
    progress.onRange?.(r + 1, manifests.length);
  }
  return ix;
}
