import { basename, dirname, resolve } from 'node:path';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { dictString } from '../../schemas/outputs.js';
import { buildTable } from '../pipeline/commit/arrow-schema.js';
import { LocalObjectStore } from '../pipeline/storage/object-store.js';
import { readParquetRows } from '../pipeline/commit/shard-read.js';
import { toParquet } from '../pipeline/commit/shard-format.js';

/**
 * A labels table: one row per defect with the leaf it was given, as `taxonomy induce` writes it
 * (and `report --labels` reads it). Same column names as the defects shard, so it joins on
 * defect_id and can stand in for the shard's own taxonomy columns.
 */
export const LabelRow = z.object({
  record_id: z.string().min(1),
  defect_id: z.string().min(1),
  category_id: dictString().nullable(),
  leaf_id: dictString().nullable(),
  taxonomy_status: dictString(),
});
export type LabelRow = z.infer<typeof LabelRow>;

/** Writes a single Parquet file atomically (temp file + rename in the same folder); rows are validated against `schema`. */
export async function writeParquetFile(path: string, schema: z.ZodObject<z.ZodRawShape>, rows: readonly unknown[], table: string): Promise<void> {
  const abs = resolve(path);
  const arrow = buildTable(schema, rows, { metadata: { reasoning_jury: JSON.stringify({ table, schema_version: '1' }) } });
  await new LocalObjectStore(dirname(abs)).putObject(basename(abs), toParquet(arrow));
}

export async function writeLabels(path: string, rows: readonly LabelRow[]): Promise<void> {
  await writeParquetFile(path, LabelRow, rows, 'taxonomy_labels');
}

export async function readLabels(path: string): Promise<LabelRow[]> {
  const bytes = await readFile(path);
  const rows = await readParquetRows(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  return rows.map((r, i) => {
    const p = LabelRow.safeParse(r);
    if (!p.success) throw new Error(`${path}: row ${i} is not a labels row: ${p.error.issues[0]?.message ?? 'invalid'}`);
    return p.data;
  });
}
