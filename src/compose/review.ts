/**
 * Recording human reviews into an output (`review`, `review import`, and the viewer's keep /
 * drop): each review names a record the output judged, and a batch is committed under the
 * output's lease like any other write (src/pipeline/commit/reviews.ts has the layout).
 */
import { REVIEW_DECISIONS, type ReviewRow, type ShardFormat } from '../../schemas/outputs.js';
import type { ObjectStore } from '../pipeline/storage/object-store.js';
import { commitReviews, type ReviewOrigin } from '../pipeline/commit/reviews.js';
import { listCommitted } from '../pipeline/commit/shard-commit.js';
import { readArrowIpcRows, readParquetRows } from '../pipeline/commit/shard-read.js';

/** A review the user has to fix (unknown record, bad decision, unreadable file): one line, exit 2. */
export class ReviewInputError extends Error {}

export interface ReviewInput {
  record_id: string;
  decision: string;
  note?: string | null | undefined;
  reviewer?: string | undefined;
}

/** Every record id the output judged (its committed verdicts), read one column at a time. */
export async function judgedRecordIds(store: ObjectStore): Promise<Set<string>> {
  const ids = new Set<string>();
  for (const m of await listCommitted(store)) {
    const files = m.files.filter((f) => f.table === 'verdicts');
    const format: ShardFormat = files.some((f) => f.format === 'parquet') ? 'parquet' : 'arrow';
    for (const f of files.filter((x) => x.format === format)) {
      const bytes = await store.get(f.key);
      if (!bytes) throw new ReviewInputError(`committed file missing: ${store.locate(f.key)}`);
      const rows = format === 'parquet' ? await readParquetRows(bytes, { columns: ['record_id'] }) : readArrowIpcRows(bytes, { columns: ['record_id'] });
      for (const r of rows) ids.add(String(r.record_id));
    }
  }
  return ids;
}

/** Checks and stamps the reviews; `where(i)` names an input line in messages. */
export function reviewRows(inputs: readonly ReviewInput[], known: ReadonlySet<string>, defaults: { reviewer: string; now: Date }, where: (i: number) => string): ReviewRow[] {
  return inputs.map((r, i) => {
    const id = typeof r.record_id === 'string' ? r.record_id.trim() : '';
    if (!id) throw new ReviewInputError(`${where(i)}: no record id`);
    if (!known.has(id)) throw new ReviewInputError(`${where(i)}: record ${JSON.stringify(id)} is not in the output's committed verdicts`);
    const decision = String(r.decision ?? '').trim().toLowerCase();
    if (!(REVIEW_DECISIONS as readonly string[]).includes(decision)) throw new ReviewInputError(`${where(i)}: decision must be keep or drop (got ${JSON.stringify(r.decision ?? '')})`);
    const reviewer = (r.reviewer ?? '').trim() || defaults.reviewer;
    const note = typeof r.note === 'string' && r.note.trim() !== '' ? r.note : null;
    return { record_id: id, decision: decision as ReviewRow['decision'], reviewer, reviewed_at: defaults.now.toISOString(), note };
  });
}

export interface RecordReviewsOptions {
  origin: ReviewOrigin;
  reviewer: string;
  /** the output's lease wrapper: takes it, runs the commit, releases it */
  withLease<T>(work: (beforeManifest: () => Promise<void>) => Promise<T>): Promise<T>;
  /** record ids already read (the viewer has them); read from the verdicts otherwise */
  known?: ReadonlySet<string>;
  where?: (i: number) => string;
  now?: () => Date;
}

/** Validates every review first (all or none), then commits them as one batch. */
export async function recordReviews(store: ObjectStore, inputs: readonly ReviewInput[], o: RecordReviewsOptions): Promise<ReviewRow[]> {
  if (inputs.length === 0) throw new ReviewInputError('no reviews given');
  const known = o.known ?? (await judgedRecordIds(store));
  const rows = reviewRows(inputs, known, { reviewer: o.reviewer, now: o.now?.() ?? new Date() }, o.where ?? ((i) => `review ${i + 1}`));
  await o.withLease((beforeManifest) => commitReviews(store, rows, { origin: o.origin, beforeManifest }));
  return rows;
}

/** Parses a review file: JSON Lines (objects) or CSV with a header (record_id or id, decision, note, reviewer). */
export function parseReviewFile(text: string, name: string): { rows: ReviewInput[]; where: (i: number) => string } {
  const trimmed = text.replace(/^\uFEFF/, '').trimStart();
  if (trimmed.startsWith('{')) return parseJsonl(text, name);
  return parseCsv(text, name);
}

function parseJsonl(text: string, name: string): { rows: ReviewInput[]; where: (i: number) => string } {
  const rows: ReviewInput[] = [];
  const lines: number[] = [];
  text.split('\n').forEach((line, n) => {
    if (line.trim() === '') return;
    let o: Record<string, unknown>;
    try {
      o = JSON.parse(line) as Record<string, unknown>;
    } catch (e) {
      throw new ReviewInputError(`${name}:${n + 1}: not JSON (${(e as Error).message})`);
    }
    if (o === null || typeof o !== 'object' || Array.isArray(o)) throw new ReviewInputError(`${name}:${n + 1}: not a JSON object`);
    rows.push(fromFields(o));
    lines.push(n + 1);
  });
  return { rows, where: (i) => `${name}:${lines[i]}` };
}

const text = (v: unknown): string | undefined => (v === undefined || v === null ? undefined : String(v));

function fromFields(o: Record<string, unknown>): ReviewInput {
  return { record_id: text(o.record_id ?? o.id) ?? '', decision: text(o.decision) ?? '', note: text(o.note) ?? null, reviewer: text(o.reviewer) };
}

function parseCsv(text: string, name: string): { rows: ReviewInput[]; where: (i: number) => string } {
  const records = csvRecords(text, name);
  const header = records.shift()?.values.map((h) => h.trim().toLowerCase());
  if (!header || !(header.includes('record_id') || header.includes('id')) || !header.includes('decision')) {
    throw new ReviewInputError(`${name}: expected JSON Lines, or CSV whose header names record_id (or id) and decision`);
  }
  const rows = records.map((r) => fromFields(Object.fromEntries(header.map((h, i) => [h, r.values[i]]))));
  return { rows, where: (i) => `${name}:${records[i]!.line}` };
}

/** RFC 4180: quoted fields may hold commas, quotes ("") and line breaks. Blank lines are skipped. */
function csvRecords(text: string, name: string): { values: string[]; line: number }[] {
  const out: { values: string[]; line: number }[] = [];
  let values: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let start = 1;
  const endRecord = () => {
    values.push(field);
    if (values.length > 1 || values[0]!.trim() !== '') out.push({ values, line: start });
    values = [];
    field = '';
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
      if (c === '\n') line++;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') values.push(field), (field = '');
    else if (c === '\n') endRecord(), line++, (start = line);
    else if (c !== '\r') field += c;
  }
  if (quoted) throw new ReviewInputError(`${name}:${start}: a quoted field is not closed`);
  if (field !== '' || values.length > 0) endRecord();
  return out;
}
