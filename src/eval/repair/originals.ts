/**
 * The original correctness of every judged record, derived from an output itself when no
 * --originals file is given: each committed corpus part holds every judged record as it was read,
 * so mapping it again with the config's `input.mapping` gives its `reference_answer` and
 * `problem_id`, and `originalOutcome` (src/derive/repair.ts, the function the repair step writes
 * `original_correct` with) gives its answer and correctness under `repair.answer.kind`.
 */
import type { JuryConfig } from '../../../schemas/config.js';
import { RepairAnswerConfig } from '../../../schemas/config.js';
import { originalOutcome } from '../../derive/repair.js';
import { readCorpusPart } from '../../pipeline/commit/corpus-read.js';
import type { ObjectStore } from '../../pipeline/storage/object-store.js';
import { mapRecord, scoreFieldsOf } from '../../pipeline/record-mapping.js';
import { committedFiles } from '../../pipeline/commit/shard-list.js';
import type { OriginalRecord } from './accuracy.js';
import { RepairReadError } from './read.js';

export interface DerivedOriginals {
  originals: OriginalRecord[];
  /** committed corpus parts read (0: the output has no corpus) */
  parts: number;
  /** later copies of a record id across parts (the first one read is kept) */
  duplicates: number;
}

/** Every committed corpus record of `store` with its original correctness, in manifest order. */
export async function corpusOriginals(store: ObjectStore, config: Pick<JuryConfig, 'input' | 'repair' | 'jurors'>): Promise<DerivedOriginals> {
  const kind = (config.repair?.answer ?? RepairAnswerConfig.parse({})).kind;
  const scoreFields = scoreFieldsOf(config);
  const files = await committedFiles(store, { tables: ['corpus'] });
  const seen = new Set<string>();
  const originals: OriginalRecord[] = [];
  let duplicates = 0;
  for (const f of files) {
    const bytes = await store.get(f.key);
    if (!bytes) throw new RepairReadError(`committed file missing: ${f.location} (listed in ${f.manifest})`);
    const part = await readCorpusPart(bytes, f.format === 'jsonl' ? 'jsonl' : 'parquet');
    for (const e of part.entries) {
      const mapped = mapRecord(e.raw ?? JSON.parse(e.text!), config.input.mapping, {}, scoreFields);
      if (!mapped.ok) throw new RepairReadError(`corpus record ${e.row.record_id} (${f.location}) no longer maps (${mapped.error}): give -c with the config the output was judged with, or --originals`);
      const r = mapped.record;
      if (seen.has(r.id)) {
        duplicates++;
        continue;
      }
      seen.add(r.id);
      originals.push({ record_id: r.id, problem_id: r.problem_id ?? r.id, correct: originalOutcome(r, kind).correct });
    }
  }
  return { originals, parts: files.length, duplicates };
}
