import { createReadStream, existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Verdict } from '../../schemas/verdict.js';
import { LocalObjectStore } from '../pipeline/object-store.js';
import { readCommittedRows } from '../pipeline/shard-read.js';
import { predictionsFromShardRows } from './predictions.js';
import type { StepPrediction } from './types.js';

export type VerdictSource =
  | { kind: 'jsonl'; verdicts: Verdict[]; invalid: Array<{ where: string; reason: string }> }
  | { kind: 'shards'; predictions: Map<string, StepPrediction>; rows: number };

async function readJsonl(path: string, out: Verdict[], invalid: Array<{ where: string; reason: string }>): Promise<void> {
  const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
  let n = 0;
  for await (const line of lines) {
    n++;
    if (line.trim() === '') continue;
    try {
      const p = Verdict.safeParse(JSON.parse(line));
      if (p.success) out.push(p.data);
      else invalid.push({ where: `${path}:${n}`, reason: p.error.issues[0]?.message ?? 'not a verdict' });
    } catch (e) {
      invalid.push({ where: `${path}:${n}`, reason: `invalid JSON: ${(e as Error).message}` });
    }
  }
}

/**
 * Stored verdicts: a shard output folder (it has _commits/; rows of the verdicts and steps
 * tables, final verdicts only) or verdict JSONL (a file, or a folder of *.jsonl), as
 * `reasoning-jury judge` prints and `eval` writes, which keeps the Phase 1 judgements.
 */
export async function readVerdictSource(path: string): Promise<VerdictSource> {
  if (!existsSync(path)) throw new Error(`no verdicts at ${path}`);
  if (statSync(path).isDirectory() && existsSync(join(path, '_commits'))) {
    const store = new LocalObjectStore(path);
    // A run may have written Parquet, Arrow IPC or both; either carries the same rows.
    let format: 'parquet' | 'arrow' = 'parquet';
    let verdicts = await readCommittedRows(store, 'verdicts', format, { columns: ['record_id', 'n_steps', 'error'] });
    if (verdicts.length === 0) verdicts = await readCommittedRows(store, 'verdicts', (format = 'arrow'), { columns: ['record_id', 'n_steps', 'error'] });
    const steps = await readCommittedRows(store, 'steps', format, { columns: ['record_id', 'step_index', 'max_impact'] });
    return { kind: 'shards', predictions: predictionsFromShardRows(verdicts, steps), rows: verdicts.length };
  }
  const files = statSync(path).isDirectory()
    ? readdirSync(path)
        .filter((f) => f.endsWith('.jsonl'))
        .sort()
        .map((f) => join(path, f))
    : [path];
  const verdicts: Verdict[] = [];
  const invalid: Array<{ where: string; reason: string }> = [];
  for (const f of files) await readJsonl(f, verdicts, invalid);
  return { kind: 'jsonl', verdicts, invalid };
}
