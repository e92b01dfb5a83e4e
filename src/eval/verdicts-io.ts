import { createReadStream, existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Verdict } from '../../schemas/verdict.js';
import { LocalObjectStore } from '../pipeline/storage/object-store.js';
import { readCommittedRows } from '../pipeline/commit/shard-read.js';
import { predictionsFromShardRows } from './predictions.js';
import type { StepPrediction } from './types.js';

export type VerdictSource =
  | { kind: 'jsonl'; verdicts: Verdict[]; invalid: InvalidLine[] }
  | { kind: 'shards'; predictions: Map<string, StepPrediction>; rows: number };

/** A line that is no verdict; `record_id` when it can still be told which record it was for. */
export interface InvalidLine {
  where: string;
  reason: string;
  record_id?: string;
}

/** The record id of a damaged line: from its JSON if that parses, else from the text (a cut-off line). */
export function recordIdOf(line: string, parsed: unknown): string | undefined {
  if (parsed && typeof parsed === 'object' && typeof (parsed as { record_id?: unknown }).record_id === 'string') return (parsed as { record_id: string }).record_id;
  const m = /"record_id"\s*:\s*"((?:[^"\\]|\\.)*)"/.exec(line);
  if (!m) return undefined;
  try {
    return JSON.parse(`"${m[1]}"`) as string;
  } catch {
    return undefined;
  }
}

async function readJsonl(path: string, out: Verdict[], invalid: InvalidLine[]): Promise<void> {
  const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
  let n = 0;
  for await (const line of lines) {
    n++;
    if (line.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch (e) {
      const id = recordIdOf(line, null);
      invalid.push({ where: `${path}:${n}`, reason: `invalid JSON: ${(e as Error).message}`, ...(id !== undefined ? { record_id: id } : {}) });
      continue;
    }
    const p = Verdict.safeParse(parsed);
    if (p.success) out.push(p.data);
    else {
      const id = recordIdOf(line, parsed);
      invalid.push({ where: `${path}:${n}`, reason: p.error.issues[0]?.message ?? 'not a verdict', ...(id !== undefined ? { record_id: id } : {}) });
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
  const invalid: InvalidLine[] = [];
  for (const f of files) await readJsonl(f, verdicts, invalid);
  return { kind: 'jsonl', verdicts, invalid };
}
