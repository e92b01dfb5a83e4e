/**
 * Everything about one record, read when it is opened: its rows of every table of its range
 * (only the files that range's manifest lists), its corpus row (the record as it was read, for
 * the problem and the trace) and the steps cut from the trace the way the jury cut them.
 */
import type { ObjectStore } from '../pipeline/storage/object-store.js';
import { readArrowIpcRows, readParquetRows, type PlainRow } from '../pipeline/commit/shard-read.js';
import { segmentRecord } from '../segment/index.js';
import { readColumns } from './columns.js';
import { partOf, type RecordIndex } from './record-index.js';
import type { CommitManifest, ManifestTableName } from './schema-bits.js';

async function rowsOf(store: ObjectStore, m: CommitManifest, table: ManifestTableName, id: string): Promise<PlainRow[]> {
  const out: PlainRow[] = [];
  for (const p of partOf(m, table)) {
    const bytes = await store.get(p.key);
    if (!bytes) throw new Error(`committed file missing: ${store.locate(p.key)}`);
    const rows = p.format === 'parquet' ? await readParquetRows(bytes) : readArrowIpcRows(bytes);
    for (const r of rows) if (r.record_id === id) out.push(r);
  }
  return out;
}

/** The input record's fields: a Struct as read, or the JSON text of a JSON input record. */
export function recordFields(raw: unknown): Record<string, unknown> | null {
  if (typeof raw === 'string') {
    try {
      const o = JSON.parse(raw) as unknown;
      return o !== null && typeof o === 'object' && !Array.isArray(o) ? (o as Record<string, unknown>) : null;
    } catch {
      return null;
    }
  }
  return raw !== null && typeof raw === 'object' ? (raw as Record<string, unknown>) : null;
}

const textField = (o: Record<string, unknown>, names: readonly string[]): string | undefined => {
  for (const n of names) if (typeof o[n] === 'string') return o[n] as string;
  return undefined;
};

/** Problem, trace and given steps under the input's usual names (a custom `input.mapping` may use others). */
export function traceParts(o: Record<string, unknown>): { problem?: string; trace?: string; steps?: string[] } {
  const problem = textField(o, ['problem', 'question', 'prompt']);
  const trace = textField(o, ['trace', 'reasoning', 'solution', 'response']);
  const steps = Array.isArray(o.steps) && o.steps.every((s) => typeof s === 'string') ? (o.steps as string[]) : undefined;
  return { ...(problem !== undefined ? { problem } : {}), ...(trace !== undefined ? { trace } : {}), ...(steps ? { steps } : {}) };
}

/** Calls `visit` with every corpus row of a range: record id and the record as read. */
export async function eachCorpusRecord(store: ObjectStore, m: CommitManifest, visit: (id: string, raw: unknown) => boolean | void): Promise<void> {
  for (const f of m.files.filter((x) => x.table === 'corpus')) {
    const bytes = await store.get(f.key);
    if (!bytes) throw new Error(`committed file missing: ${store.locate(f.key)}`);
    if (f.format === 'jsonl') {
      for (const line of new TextDecoder().decode(bytes).split('\n')) {
        if (!line) continue;
        const o = JSON.parse(line) as { record_id: string; record: unknown };
        if (visit(o.record_id, o.record) === false) return;
      }
      continue;
    }
    const cols = await readColumns(bytes, 'parquet', ['record_id', 'record']);
    for (let i = 0; i < cols.record_id!.length; i++) if (visit(String(cols.record_id![i]), cols.record![i]) === false) return;
  }
}

const RAW_CAP = 200_000;

function stepsOf(parts: ReturnType<typeof traceParts>, labels: PlainRow[]): { index: number; text: string | null; max_impact: unknown; label: unknown; defect_ids: unknown }[] {
  let texts: string[] = [];
  try {
    if (parts.trace !== undefined || parts.steps) texts = segmentRecord(parts).map((s) => s.text);
  } catch {
    texts = [];
  }
  const byIndex = new Map(labels.map((s) => [Number(s.step_index), s]));
  const n = Math.max(texts.length, ...byIndex.keys(), 0);
  return Array.from({ length: n }, (_, k) => {
    const s = byIndex.get(k + 1);
    return { index: k + 1, text: texts[k] ?? null, max_impact: s?.max_impact ?? null, label: s?.label ?? null, defect_ids: s?.defect_ids ?? [] };
  });
}

export async function recordDetail(store: ObjectStore, ix: RecordIndex, i: number): Promise<Record<string, unknown>> {
  const id = ix.ids[i]!;
  const m = ix.manifests[ix.range[i]!]!;
  const [verdict, decision, defects, steps, details] = await Promise.all([
    rowsOf(store, m, 'verdicts', id),
    rowsOf(store, m, 'decisions', id),
    rowsOf(store, m, 'defects', id),
    rowsOf(store, m, 'steps', id),
    rowsOf(store, m, 'verdict_details', id),
  ]);
  let raw: unknown;
  await eachCorpusRecord(store, m, (rid, r) => (rid === id ? ((raw = r), false) : true));
  const fields = recordFields(raw);
  const parts = fields ? traceParts(fields) : {};
  const rawText = raw === undefined ? null : typeof raw === 'string' ? raw : JSON.stringify(raw, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  const ordinal = (d: PlainRow) => Number(/#d(\d+)$/.exec(String(d.defect_id))?.[1] ?? 0);
  return {
    id,
    range: `${m.first}-${m.last}`,
    verdict: verdict[0] ?? null,
    decision: decision[0] ?? null,
    defects: [...defects].sort((a, b) => ordinal(a) - ordinal(b)),
    steps: stepsOf(parts, steps),
    details: details[0] ?? null,
    problem: parts.problem ?? null,
    has_corpus: raw !== undefined,
    record_text: rawText === null ? null : rawText.length > RAW_CAP ? `${rawText.slice(0, RAW_CAP)}…` : rawText,
    review: ix.reviews.get(id) ?? null,
  };
}
