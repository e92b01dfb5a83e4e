import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { tableFromArrays } from 'apache-arrow';
import type { TraceRecord } from '../../schemas/trace.js';
import { toParquet } from '../../src/pipeline/commit/shard-format.js';
import { pyenvPython } from '../helpers/run-setup.js';

/** Trace records as a Parquet file (id, problem, trace) with row groups of `rowGroupRows`. */
export function tracesParquet(records: readonly TraceRecord[], rowGroupRows: number): Uint8Array {
  const table = tableFromArrays({
    id: records.map((r) => r.id),
    problem: records.map((r) => r.problem),
    trace: records.map((r) => r.trace ?? (r.steps ?? []).join('\n\n')),
  });
  return toParquet(table, { rowGroupRows, compression: 'zstd' });
}

export interface S3Report {
  verdicts: { rows: number; record_ids?: string[]; sources?: string[] };
  dead_letters: { rows: number; positions?: string[] };
  defects: { rows: number };
  steps: { rows: number };
  decisions: { rows: number };
}

/** pyarrow's view of a run's output on the S3 server (test/s3/check_s3.py). */
export function pyarrowReport(bucket: string, prefix: string): S3Report {
  const python = pyenvPython();
  if (!python) throw new Error('scripts/pyenv.sh could not provide python with pyarrow');
  const out = execFileSync(python, [join('test', 's3', 'check_s3.py'), bucket, prefix], { encoding: 'utf8', maxBuffer: 64 << 20, timeout: 120_000 });
  return JSON.parse(out) as S3Report;
}
