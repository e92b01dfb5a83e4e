/**
 * `reasoning-jury decide`: a new filter policy over committed verdicts, with no model call.
 *
 * Each committed range of the judged output (its manifest lists the files) is read back and
 * decided again with the same function the stream uses (src/derive/rows.ts `decideRows`), then
 * committed to the new output under the same range names and protocol (parts, then manifest).
 * A range whose manifest is already in the new output is skipped, so an interrupted `decide` is
 * resumed by running it again, and every record is decided exactly once.
 *
 * When the judged output has a curated corpus, its committed parts hold every judged record as
 * it was read (`record`), so the new output gets a corpus too, in the same range commit as the
 * new decisions: the same records and `record` column (type included), new curation columns.
 */
import type { RangeTableLog } from '../pipeline/commit/delta/range-table-log.js';
import type { FilterPolicy } from '../../schemas/config.js';
import { CorpusFormat, FILTER_DECISIONS, SHARD_TABLE_NAMES, type CommitManifest, type DecisionRow, type DefectRow, type FilterDecision, type ShardFormat, type ReviewRow, type ShardTableName, type StepRow, type VerdictRow } from '../../schemas/outputs.js';
import { corpusRow } from '../derive/corpus.js';
import { decideRows, type DerivedRows } from '../derive/rows.js';
import type { CorpusBatch, CorpusEntry } from '../pipeline/commit/corpus.js';
import { readCorpusPart } from '../pipeline/commit/corpus-read.js';
import type { ObjectStore } from '../pipeline/storage/object-store.js';
import { reviewReason, reviewsFingerprint } from '../pipeline/commit/reviews.js';
import { listCommitted, ShardCommitter } from '../pipeline/commit/shard-commit.js';
import { readArrowIpcRows, readParquetRows, type PlainRow } from '../pipeline/commit/shard-read.js';
import { ReasoningJuryError } from '../util/errors.js';
import { policyHash } from './card-facts.js';

export interface RedecideOptions {
  from: ObjectStore;
  /** the judged output, for messages and the new manifests */
  fromLocation: string;
  to: ObjectStore;
  toLocation: string;
  policy: FilterPolicy;
  formats: readonly ShardFormat[];
  onRange?(e: { first: string; last: string; records: number; existing: boolean }): void;
  /** human reviews of the judged output (latest per record): they override the policy's decision */
  reviews?: ReadonlyMap<string, ReviewRow>;
  /** checked before each manifest: throws once this command no longer holds --out's lease */
  beforeManifest?: () => Promise<void>;
  /** the new output's Delta tables (`--table-format delta`): each decided range is a Delta commit there */
  tableLog?: RangeTableLog;
  /** told after each range this command committed (the dataset card, ./card-writer.ts) */
  afterCommit?: (manifest: CommitManifest) => void;
}

export interface RedecideResult {
  ranges: number;
  /** ranges found already decided in the new output (a resumed `decide`) */
  existing: number;
  records: number;
  decisions: Record<FilterDecision, number>;
  /** records (in ranges decided now) whose decision a human review set */
  reviewed: number;
  /** the corpus format of the new output: the judged output's, or null when it has no corpus */
  corpus: CorpusFormat | null;
}

/** A problem with the inputs of `decide` the user fixes (exit 2, one line). */
export class RedecideError extends ReasoningJuryError {
  override get kind() {
    return 'internal' as const;
  }
}

// Identifies a policy in the new manifests, so a resume with another policy is refused.
export { policyHash } from './card-facts.js';

const usesDissent = (p: FilterPolicy): boolean =>
  p.rules.some((r) => [r, ...(r.all ?? [])].some((c) => c.has_dissent !== undefined || c.dissent_at_least !== undefined));

export async function readTable(store: ObjectStore, m: CommitManifest, table: ShardTableName): Promise<PlainRow[]> {
  const files = m.files.filter((f) => f.table === table);
  const format: ShardFormat | undefined = files.some((f) => f.format === 'parquet') ? 'parquet' : files.some((f) => f.format === 'arrow') ? 'arrow' : undefined;
  const out: PlainRow[] = [];
  for (const f of files.filter((x) => x.format === format)) {
    const bytes = await store.get(f.key);
    if (!bytes) throw new RedecideError(`committed file missing: ${f.key} (listed in _commits/${m.first}-${m.last}.json)`);
    out.push(...(format === 'parquet' ? await readParquetRows(bytes) : readArrowIpcRows(bytes)));
  }
  return out;
}

const ordinal = (defectId: string): number => Number(/#d(\d+)$/.exec(defectId)?.[1] ?? 0);

function groupBy<T extends { record_id: string }>(rows: readonly T[]): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const r of rows) {
    let list = m.get(r.record_id);
    if (!list) m.set(r.record_id, (list = []));
    list.push(r);
  }
  return m;
}

export type Decided = Pick<DerivedRows, 'verdict' | 'defects' | 'steps' | 'decision'>;

/** The rows of one committed range, decided again, in the order of its verdict rows (as a run writes them). */
export async function decideRecords(store: ObjectStore, m: CommitManifest, policy: FilterPolicy, reviews?: ReadonlyMap<string, ReviewRow>): Promise<Decided[]> {
  const verdicts = (await readTable(store, m, 'verdicts')) as unknown as VerdictRow[];
  const defects = groupBy((await readTable(store, m, 'defects')) as unknown as DefectRow[]);
  const steps = groupBy((await readTable(store, m, 'steps')) as unknown as StepRow[]);
  const dissent = usesDissent(policy);
  return verdicts.map((v) => {
    if (v.n_dissent === undefined || v.n_dissent === null) {
      if (dissent) throw new RedecideError(`the policy tests dissent, but the verdicts of range ${m.first}-${m.last} have no n_dissent column (judged before it existed): re-judge, or drop the dissent conditions`);
      v = { ...v, n_dissent: 0 };
    }
    const d = [...(defects.get(v.record_id) ?? [])].sort((a, b) => ordinal(a.defect_id) - ordinal(b.defect_id));
    const s = [...(steps.get(v.record_id) ?? [])].sort((a, b) => a.step_index - b.step_index);
    return { verdict: v, defects: d, steps: s, decision: withReview(decideRows({ verdict: v, defects: d, steps: s }, policy), reviews?.get(v.record_id)) };
  });
}

/** A human review overrides the policy: its decision, and `review:<reviewer>` as the reason (and so the corpus's rule). */
function withReview(decision: DecisionRow, review: ReviewRow | undefined): DecisionRow {
  return review ? { ...decision, decision: review.decision, reason: reviewReason(review) } : decision;
}

/** The decision rows of one committed range, in the order of its verdict rows (as a run writes them). */
export async function decideRange(store: ObjectStore, m: CommitManifest, policy: FilterPolicy): Promise<DecisionRow[]> {
  return (await decideRecords(store, m, policy)).map((r) => r.decision);
}

const positionKey = (unit: string, offset: number): string => `${unit}\u0000${offset}`;

/**
 * The range's corpus with the new decisions, from its committed corpus parts (every decision's):
 * each row's record as the part held it, joined to its verdict by position (unit and offset, so
 * duplicate ids kept with `keep_all` still pair up). Undefined when the range has no corpus.
 */
export async function redecideCorpus(store: ObjectStore, m: CommitManifest, decided: readonly Decided[]): Promise<CorpusBatch | undefined> {
  const files = m.files.filter((f) => f.table === 'corpus');
  if (files.length === 0) return undefined;
  const range = `${m.first}-${m.last}`;
  const format = CorpusFormat.parse(files[0]!.format);
  const byPosition = new Map(decided.map((d) => [positionKey(d.verdict.source_unit, d.verdict.source_offset), d]));
  let columns: CorpusBatch['columns'];
  const entries: CorpusEntry[] = [];
  for (const f of files) {
    const bytes = await store.get(f.key);
    if (!bytes) throw new RedecideError(`committed file missing: ${f.key} (listed in _commits/${range}.json)`);
    const part = await readCorpusPart(bytes, format);
    columns ??= part.columns;
    for (const e of part.entries) {
      const key = positionKey(e.row.source_unit, e.row.source_offset);
      const d = byPosition.get(key);
      if (!d || d.verdict.record_id !== e.row.record_id) throw new RedecideError(`corpus row ${e.row.record_id} (offset ${e.row.source_offset}) of range ${range} has no verdict there: the output is inconsistent`);
      byPosition.delete(key);
      entries.push({ ...e, row: corpusRow(d, { source: e.row.source, unit: e.row.source_unit, offset: e.row.source_offset }) });
    }
  }
  if (byPosition.size > 0) throw new RedecideError(`${byPosition.size} verdict(s) of range ${range} have no corpus row: the output is inconsistent`);
  entries.sort((a, b) => a.row.source_offset - b.row.source_offset);
  return { format, entries, ...(columns ? { columns } : {}) };
}

/** Decides every committed range of `from` into `to`; see the module comment. */
export async function redecide(o: RedecideOptions): Promise<RedecideResult> {
  // The new output holds decisions (and the corpus) only: no zero-row parts of tables it never writes.
  const committer = new ShardCommitter(o.to, { formats: o.formats, off: SHARD_TABLE_NAMES.filter((t) => t !== 'decisions'), ...(o.beforeManifest ? { beforeManifest: o.beforeManifest } : {}), ...(o.tableLog ? { tableLog: o.tableLog } : {}), ...(o.afterCommit ? { afterCommit: o.afterCommit } : {}) });
  const hash = policyHash(o.policy);
  const reviewed = reviewsFingerprint(o.reviews ?? new Map());
  const result: RedecideResult = { ranges: 0, existing: 0, records: 0, reviewed: 0, decisions: Object.fromEntries(FILTER_DECISIONS.map((d) => [d, 0])) as Record<FilterDecision, number>, corpus: null };
  const manifests = await listCommitted(o.from);
  if (manifests.length === 0) throw new RedecideError(`${o.fromLocation} holds no committed ranges (no _commits/*.json): nothing to decide`);
  for (const m of manifests) {
    const done = await committer.committed(m.first, m.last);
    if (done) {
      const theirs = (done.extra as { policy_hash?: unknown } | undefined)?.policy_hash;
      if (theirs !== hash) throw new RedecideError(`${o.toLocation} already holds range ${m.first}-${m.last} decided with another policy (policy_hash ${String(theirs)}, this one ${hash}): use another --out`);
      const theirReviews = (done.extra as { reviews?: unknown } | undefined)?.reviews ?? 'none';
      if (theirReviews !== reviewed) throw new RedecideError(`${o.toLocation} already holds range ${m.first}-${m.last} decided under other reviews (${String(theirReviews)}, now ${reviewed}): use another --out`);
    }
    const decided = done ? null : await decideRecords(o.from, m, o.policy, o.reviews);
    const rows = decided?.map((r) => r.decision) ?? null;
    const corpus = decided ? await redecideCorpus(o.from, m, decided) : undefined;
    const res = rows
      ? await committer.commit({
          source: m.source,
          first: m.first,
          last: m.last,
          tables: { decisions: rows },
          ...(corpus ? { corpus } : {}),
          ...(m.range ? { range: m.range } : {}),
          ...(m.settings ? { settings: { ...m.settings, formats: [...o.formats] } } : {}),
          extra: { decided_from: o.fromLocation, from_checksum: m.checksum, policy_hash: hash, ...(reviewed === 'none' ? {} : { reviews: reviewed }) },
        })
      : null;
    const records = res ? rows!.length : (done!.rows.decisions ?? 0);
    const format = corpus?.format ?? done?.files.find((f) => f.table === 'corpus')?.format;
    if (format) result.corpus = CorpusFormat.parse(format);
    if (rows) for (const r of rows) result.decisions[r.decision] += 1;
    if (rows) result.reviewed += rows.filter((r) => r.reason.startsWith('review:') && o.reviews?.has(r.record_id)).length;
    result.ranges += 1;
    result.records += records;
    if (!res || res.alreadyCommitted) result.existing += 1;
    o.onRange?.({ first: m.first, last: m.last, records, existing: !res || res.alreadyCommitted });
  }
  return result;
}
