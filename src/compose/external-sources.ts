/**
 * Loads the files `kind: external` seats read (critic outputs, an earlier run's verdicts) once
 * at start, keyed by record id, so judging a record is a lookup (src/jury/external/). A file
 * that cannot be read, a row without an id or an id listed twice stops the command before any
 * work: a seat that silently read half its source would bias every verdict it sits on.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isExternalSeat, type JuryConfig } from '../../schemas/config.js';
import { Defect } from '../../schemas/defect.js';
import type { ExternalSeatConfig } from '../../schemas/external.js';
import { DEFAULT_EXTERNAL_FIELD } from '../../schemas/external.js';
import { Verdict } from '../../schemas/verdict.js';
import type { ExternalEntry, ExternalSources } from '../jury/external/index.js';
import { LocalObjectStore } from '../pipeline/storage/object-store.js';
import { getPath } from '../pipeline/record-mapping.js';
import { type PlainRow, readCommittedRows, readParquetRows } from '../pipeline/commit/shard-read.js';

type Entries = Map<string, ExternalEntry>;

const idOf = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' || typeof v === 'bigint' ? String(v) : null);

function put(seat: ExternalSeatConfig, out: Entries, id: string | null, entry: ExternalEntry, where: string): void {
  if (id === null) throw new Error(`external source of seat ${seat.id}: ${where} has no record id at "${seat.format === 'verdicts' ? 'record_id' : seat.id_field}"`);
  if (out.has(id)) throw new Error(`external source of seat ${seat.id}: record id "${id}" appears twice (again at ${where})`);
  out.set(id, entry);
}

/** JSON lines of a file; blank lines skipped, a broken line is an error naming it. */
function jsonLines(path: string): Array<{ row: unknown; where: string }> {
  const out: Array<{ row: unknown; where: string }> = [];
  readFileSync(path, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (line.trim() === '') return;
      try {
        out.push({ row: JSON.parse(line), where: `${path}:${i + 1}` });
      } catch (e) {
        throw new Error(`${path}:${i + 1}: invalid JSON (${(e as Error).message})`);
      }
    });
  return out;
}

async function rowsOf(path: string): Promise<Array<{ row: unknown; where: string }>> {
  if (!path.endsWith('.parquet')) return jsonLines(path);
  const rows = await readParquetRows(new Uint8Array(readFileSync(path)));
  return rows.map((row, i) => ({ row, where: `${path} row ${i}` }));
}

/** `defects`, `first_error`, `sections`: the value at `field` of each row, by `id_field`. */
async function recordedOutputs(seat: ExternalSeatConfig, path: string): Promise<Entries> {
  const field = seat.field ?? DEFAULT_EXTERNAL_FIELD[seat.format as keyof typeof DEFAULT_EXTERNAL_FIELD];
  const out: Entries = new Map();
  for (const { row, where } of await rowsOf(path)) {
    const value = getPath(row, field);
    // No value at the field: the record counts as missing (on_missing), like an absent row.
    if (value === undefined || value === null) continue;
    put(seat, out, idOf(getPath(row, seat.id_field)), { kind: 'value', value }, where);
  }
  return out;
}

/** An earlier run's output folder: final verdicts and their defects from the committed shards. */
async function shardVerdicts(seat: ExternalSeatConfig, dir: string): Promise<Entries> {
  const store = new LocalObjectStore(dir);
  let format: 'parquet' | 'arrow' = 'parquet';
  let verdicts = await readCommittedRows(store, 'verdicts', format, { columns: ['record_id', 'n_steps', 'error'] });
  if (verdicts.length === 0) verdicts = await readCommittedRows(store, 'verdicts', (format = 'arrow'), { columns: ['record_id', 'n_steps', 'error'] });
  const defects = new Map<string, PlainRow[]>();
  for (const d of await readCommittedRows(store, 'defects', format)) {
    const id = String(d.record_id);
    defects.set(id, [...(defects.get(id) ?? []), d]);
  }
  // defect_id is `<record_id>#d<n>`: n keeps the verdict's own order.
  const nth = (d: PlainRow) => Number(/#d(\d+)$/.exec(String(d.defect_id))?.[1] ?? 0);
  const out: Entries = new Map();
  for (const v of verdicts) {
    const id = idOf(v.record_id);
    const rows = (defects.get(id ?? '') ?? []).sort((a, b) => nth(a) - nth(b));
    const ds = rows.map((d) => Defect.parse({ statement_refs: d.statement_refs, impact: d.impact, what_went_wrong: d.what_went_wrong, evidence: d.evidence, correct_value: d.correct_value ?? null }));
    put(seat, out, id, { kind: 'verdict', n_steps: Number(v.n_steps), error: (v.error as string | null) ?? null, defects: ds }, `${dir} (verdicts of ${id})`);
  }
  return out;
}

/** Verdict JSONL (`judge` / `eval` output): a file or a folder of *.jsonl. */
function jsonlVerdicts(seat: ExternalSeatConfig, path: string): Entries {
  const files = statSync(path).isDirectory() ? readdirSync(path).filter((f) => f.endsWith('.jsonl')).sort().map((f) => join(path, f)) : [path];
  const out: Entries = new Map();
  for (const f of files) {
    for (const { row, where } of jsonLines(f)) {
      const p = Verdict.safeParse(row);
      if (!p.success) throw new Error(`external source of seat ${seat.id}: ${where} is not a verdict (${p.error.issues[0]?.message})`);
      put(seat, out, p.data.record_id, { kind: 'verdict', n_steps: p.data.n_steps, error: p.data.error, defects: p.data.defects }, where);
    }
  }
  return out;
}

async function loadSeat(seat: ExternalSeatConfig): Promise<Entries> {
  const path = seat.path!;
  if (!existsSync(path)) throw new Error(`external source of seat ${seat.id}: no file or folder at ${path}`);
  if (seat.format !== 'verdicts') return recordedOutputs(seat, path);
  return existsSync(join(path, '_commits')) ? shardVerdicts(seat, path) : jsonlVerdicts(seat, path);
}

/** Every file-backed external seat's source; undefined when the config has none. */
export async function loadExternalSources(config: Pick<JuryConfig, 'jurors'>): Promise<ExternalSources | undefined> {
  const seats = config.jurors.filter(isExternalSeat).filter((s) => s.format !== 'step_scores');
  if (seats.length === 0) return undefined;
  const bySeat = new Map<string, Entries>();
  for (const s of seats) bySeat.set(s.id, await loadSeat(s));
  return {
    lookup: (seat, record) => bySeat.get(seat)?.get(record),
    loaded: (seat) => bySeat.has(seat),
  };
}
