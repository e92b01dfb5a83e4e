import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Impact } from '../../schemas/defect.js';
import { LocalObjectStore } from '../pipeline/storage/object-store.js';
import { listCommitted } from '../pipeline/commit/shard-commit.js';
import { readCommittedRows } from '../pipeline/commit/shard-read.js';
import { readLabels, writeParquetFile } from '../induce/labels.js';
import { loadTaxonomy, type Taxonomy } from '../taxonomy/schema.js';
import { computeFingerprints, type DefectIn, type TraceIn } from './fingerprints.js';
import { renderReport } from './html.js';
import { FINGERPRINT_TABLES, type Fingerprints, type FingerprintTableName } from './tables.js';
import { ReasoningJuryError } from '../util/errors.js';

export interface ReportOptions {
  /** run output folders (their committed ranges are read) */
  shards: readonly string[];
  out: string;
  /** taxonomy for names (default: the shipped one) */
  taxonomyFile?: string;
  /** labels from `taxonomy induce`, used instead of the shards' own leaf columns */
  labelsFile?: string;
  generatorKey: string;
  correctKey: string;
  title?: string;
}

export interface ReportResult {
  fingerprints: Fingerprints;
  htmlPath: string;
  tablePaths: Record<FingerprintTableName, string>;
  notes: string[];
}

export class ReportInputError extends ReasoningJuryError {
  override get kind() {
    return 'input' as const;
  }
}

async function readRuns(dirs: readonly string[]): Promise<{ traces: TraceIn[]; defects: Array<DefectIn & { defect_id: string }> }> {
  const traces: TraceIn[] = [];
  const defects: Array<DefectIn & { defect_id: string }> = [];
  for (const [i, dir] of dirs.entries()) {
    const root = resolve(dir);
    if (!existsSync(root)) throw new ReportInputError(`no such folder: ${root}`);
    const store = new LocalObjectStore(root);
    if ((await listCommitted(store)).length === 0) throw new ReportInputError(`${root} has no committed ranges (_commits/*.json): give the --out folder of a run`);
    // Record ids may repeat across runs (same problems, other generator): key traces per run.
    const key = (recordId: unknown) => `${i}\u0000${String(recordId)}`;
    for (const v of await readCommittedRows(store, 'verdicts', 'parquet', { columns: ['record_id', 'n_steps', 'error', 'meta'] })) {
      traces.push({ key: key(v.record_id), n_steps: Number(v.n_steps), error: (v.error as string | null) ?? null, meta: (v.meta as string | null) ?? null });
    }
    for (const d of await readCommittedRows(store, 'defects', 'parquet', { columns: ['record_id', 'defect_id', 'statement_refs', 'impact', 'category_id', 'leaf_id'] })) {
      defects.push({
        trace: key(d.record_id),
        defect_id: String(d.defect_id),
        statement_refs: (d.statement_refs as number[] | null) ?? [],
        impact: Impact.parse(d.impact),
        category_id: (d.category_id as string | null) ?? null,
        leaf_id: (d.leaf_id as string | null) ?? null,
      });
    }
  }
  return { traces, defects };
}

/** Reads the runs, computes the fingerprints, writes the Parquet tables and the HTML page. */
export async function buildReport(o: ReportOptions): Promise<ReportResult> {
  const taxonomy: Taxonomy = loadTaxonomy(o.taxonomyFile);
  const { traces, defects } = await readRuns(o.shards);
  const notes: string[] = [];
  if (o.labelsFile) {
    // Labels replace the shard columns; a defect the labels do not cover counts as unassigned.
    const labels = new Map((await readLabels(o.labelsFile)).map((l) => [l.defect_id, l] as const));
    let missing = 0;
    for (const d of defects) {
      const l = labels.get(d.defect_id);
      if (!l) missing++;
      d.leaf_id = l?.leaf_id ?? null;
      d.category_id = l?.category_id ?? null;
    }
    if (missing > 0) notes.push(`${missing} defects have no row in the labels file and count as unassigned.`);
  }
  const r = computeFingerprints(traces, defects, { taxonomy, generatorKey: o.generatorKey, correctKey: o.correctKey });
  if (r.unknownLeaves > 0) notes.push(`${r.unknownLeaves} defects carry leaf ids this taxonomy does not know; they are shown by id (pass --taxonomy with the file the run used).`);
  if (r.orphanDefects > 0) notes.push(`${r.orphanDefects} defects belong to records without a verdict row and were skipped.`);

  const out = resolve(o.out);
  const tablePaths = {} as Record<FingerprintTableName, string>;
  for (const name of Object.keys(FINGERPRINT_TABLES) as FingerprintTableName[]) {
    const path = join(out, 'fingerprints', `${name}.parquet`);
    await writeParquetFile(path, FINGERPRINT_TABLES[name], r.tables[name], name);
    tablePaths[name] = path;
  }
  const html = renderReport(r.tables, {
    title: o.title ?? 'Reasoning defect fingerprints',
    sources: [`Shards: ${o.shards.map((s) => resolve(s)).join(', ')}`, ...(o.labelsFile ? [`Labels: ${resolve(o.labelsFile)}`] : [])],
    taxonomyName: taxonomy.name,
    notes,
    correctKey: o.correctKey,
  });
  const htmlPath = join(out, 'report.html');
  await new LocalObjectStore(out).putObject('report.html', new TextEncoder().encode(html));
  return { fingerprints: r.tables, htmlPath, tablePaths, notes };
}
