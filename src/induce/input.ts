import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { Impact } from '../../schemas/defect.js';
import { LocalObjectStore } from '../pipeline/storage/object-store.js';
import { listCommitted } from '../pipeline/commit/shard-commit.js';
import { readCommittedRows } from '../pipeline/commit/shard-read.js';
import { ReasoningJuryError } from '../util/errors.js';

/** One defect as induction sees it: its text, and the generator of the trace it came from. */
export interface InduceDefect {
  defect_id: string;
  record_id: string;
  generator: string;
  what_went_wrong: string;
  impact: Impact;
}

export const UNKNOWN_GENERATOR = '(unknown)';

/** The generator named in a verdict row's meta JSON (key `key`), or UNKNOWN_GENERATOR. */
export function generatorOf(meta: unknown, key: string): string {
  if (typeof meta !== 'string' || meta === '') return UNKNOWN_GENERATOR;
  try {
    const v = (JSON.parse(meta) as Record<string, unknown>)[key];
    return typeof v === 'string' && v.trim() !== '' ? v : UNKNOWN_GENERATOR;
  } catch {
    return UNKNOWN_GENERATOR;
  }
}

export class InputError extends ReasoningJuryError {
  override get kind() {
    return 'input' as const;
  }
}

/**
 * Defects of one or more run output folders (committed ranges only), pooled. A defect id seen
 * twice (the same run given twice) is kept once. Sorted by defect id, so the result does not
 * depend on file or folder order.
 */
export async function readInduceInput(dirs: readonly string[], generatorKey = 'generator'): Promise<{ defects: InduceDefect[]; duplicates: number }> {
  const byId = new Map<string, InduceDefect>();
  let duplicates = 0;
  for (const dir of dirs) {
    const root = resolve(dir);
    if (!existsSync(root)) throw new InputError(`no such folder: ${root}`);
    const store = new LocalObjectStore(root);
    if ((await listCommitted(store)).length === 0) throw new InputError(`${root} has no committed ranges (_commits/*.json): give the --out folder of a run`);
    const generators = new Map<string, string>();
    for (const v of await readCommittedRows(store, 'verdicts', 'parquet', { columns: ['record_id', 'meta'] })) generators.set(String(v.record_id), generatorOf(v.meta, generatorKey));
    for (const d of await readCommittedRows(store, 'defects', 'parquet', { columns: ['record_id', 'defect_id', 'what_went_wrong', 'impact'] })) {
      const id = String(d.defect_id);
      if (byId.has(id)) {
        duplicates++;
        continue;
      }
      const recordId = String(d.record_id);
      byId.set(id, { defect_id: id, record_id: recordId, generator: generators.get(recordId) ?? UNKNOWN_GENERATOR, what_went_wrong: String(d.what_went_wrong ?? ''), impact: Impact.parse(d.impact) });
    }
  }
  const defects = [...byId.values()].sort((a, b) => (a.defect_id < b.defect_id ? -1 : a.defect_id > b.defect_id ? 1 : 0));
  return { defects, duplicates };
}

/**
 * Round-robin over generators (sorted by name), each in defect-id order, so every batch mixes
 * models; the same input always gives the same order.
 */
export function interleave(defects: readonly InduceDefect[]): InduceDefect[] {
  const groups = new Map<string, InduceDefect[]>();
  for (const d of defects) {
    const q = groups.get(d.generator);
    if (q) q.push(d);
    else groups.set(d.generator, [d]);
  }
  const queues = [...groups.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([, q]) => q);
  const out: InduceDefect[] = [];
  for (let i = 0; out.length < defects.length; i++) for (const q of queues) if (i < q.length) out.push(q[i]!);
  return out;
}

/** Identity of an input for resuming: the defects' ids and texts, in order. */
export function inputHash(defects: readonly InduceDefect[]): string {
  const h = createHash('sha256');
  for (const d of defects) h.update(d.defect_id).update('\0').update(d.generator).update('\0').update(d.what_went_wrong).update('\0');
  return h.digest('hex').slice(0, 32);
}
