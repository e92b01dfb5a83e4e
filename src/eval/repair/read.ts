/**
 * Reading what `eval repair` analyses: the `repairs` table of an output through its commit
 * manifests (only files a manifest lists, as every reader here: src/pipeline/commit/shard-list.ts),
 * a single Parquet or Arrow file of RepairRow rows, and the optional originals JSONL.
 */
import { readFileSync } from 'node:fs';
import type { Impact } from '../../../schemas/defect.js';
import { OriginalOutcome } from '../../../schemas/repair-analysis.js';
import { RepairRow } from '../../../schemas/repair.js';
import type { ObjectStore } from '../../pipeline/storage/object-store.js';
import { committedFiles } from '../../pipeline/commit/shard-list.js';
import { type PlainRow, readArrowIpcRows, readCommittedRows, readParquetRows } from '../../pipeline/commit/shard-read.js';
import { ReasoningJuryError } from '../../util/errors.js';

export const REPAIRS_TABLE = 'repairs';

/** A file or row that does not hold what `eval repair` reads (exit 2, one line). */
export class RepairReadError extends ReasoningJuryError {
  override get kind() {
    return 'input' as const;
  }
}

function parseRows(rows: readonly PlainRow[], where: string): RepairRow[] {
  return rows.map((r, i) => {
    const p = RepairRow.safeParse(r);
    if (!p.success) {
      const issue = p.error.issues[0];
      throw new RepairReadError(`${where}: row ${i} is not a repairs row (${issue ? `${issue.path.join('.') || '(row)'}: ${issue.message}` : 'invalid'})`);
    }
    return p.data;
  });
}

/** Rows of one Parquet (`.parquet`) or Arrow IPC (`.arrow`) file of RepairRow rows. */
export async function repairRowsFromFile(bytes: Uint8Array, name: string): Promise<RepairRow[]> {
  if (name.endsWith('.parquet')) return parseRows(await readParquetRows(bytes), name);
  if (name.endsWith('.arrow')) return parseRows(readArrowIpcRows(bytes), name);
  throw new RepairReadError(`${name}: give a .parquet or .arrow file, or an output folder`);
}

export interface CommittedRepairs {
  rows: RepairRow[];
  files: number;
  ranges: number;
}

/**
 * Every committed `repairs` row of an output, in manifest order. A range that lists the table
 * in both formats is read from its Parquet part.
 */
export async function committedRepairRows(store: ObjectStore): Promise<CommittedRepairs> {
  const files = (await committedFiles(store)).filter((f) => (f.table as string) === REPAIRS_TABLE);
  const parquetRanges = new Set(files.filter((f) => f.format === 'parquet').map((f) => f.range));
  const rows: RepairRow[] = [];
  let read = 0;
  for (const f of files) {
    if (f.format !== 'parquet' && parquetRanges.has(f.range)) continue;
    const bytes = await store.get(f.key);
    if (!bytes) throw new RepairReadError(`committed file missing: ${f.location} (listed in ${f.manifest})`);
    rows.push(...(await repairRowsFromFile(bytes, f.key)));
    read++;
  }
  return { rows, files: read, ranges: new Set(files.map((f) => f.range)).size };
}

/** The originals JSONL: one OriginalOutcome per line; blank lines skipped; a bad line throws naming it. */
export function readOriginals(path: string): OriginalOutcome[] {
  const out: OriginalOutcome[] = [];
  readFileSync(path, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (line.trim() === '') return;
      let json: unknown;
      try {
        json = JSON.parse(line);
      } catch (e) {
        throw new RepairReadError(`${path}:${i + 1}: not JSON (${(e as Error).message})`);
      }
      const p = OriginalOutcome.safeParse(json);
      if (!p.success) throw new RepairReadError(`${path}:${i + 1}: ${p.error.issues[0]?.path.join('.') ?? ''} ${p.error.issues[0]?.message ?? 'invalid'}`);
      out.push(p.data);
    });
  return out;
}

/** Each committed verdict's highest severity, by record id, from the Parquet verdicts (Arrow when there are none); the first verdict of an id wins, as the eval loaders do. */
export async function committedSeverities(store: ObjectStore): Promise<Map<string, Impact | null>> {
  const out = new Map<string, Impact | null>();
  const opts = { columns: ['record_id', 'max_impact'] };
  let rows = await readCommittedRows(store, 'verdicts', 'parquet', opts);
  if (rows.length === 0) rows = await readCommittedRows(store, 'verdicts', 'arrow', opts);
  for (const v of rows) {
    const id = v.record_id as string;
    if (!out.has(id)) out.set(id, (v.max_impact ?? null) as Impact | null);
  }
  return out;
}
