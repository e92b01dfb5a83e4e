// The curated corpus of a real run (issue 13): every input record with all its fields, per
// decision, read back by pyarrow and DuckDB; JSONL in and the same records as Parquet in; and,
// through the committed-file listing (`shards list`), by pyarrow, DuckDB and polars. Also
// the zero-row parts (a DuckDB glob over dead_letters/ works with no dead letter) and one root
// per format (`--format both` puts Arrow IPC under arrow/, so a dataset of verdicts/ is Parquet).
import { execFileSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { runCli } from '../helpers/cli.js';
import { LONG_TEST_MS, treeProbe } from '../helpers/progress.js';
import { fastSimConfig, pyenvPython, tempDir, writeJsonl } from '../helpers/run-setup.js';

const N = 5000;
const python = pyenvPython();

interface Report {
  decisions: Record<string, number>;
  dead_letters_glob: number;
  corpus_files: number;
  schemas_equal?: boolean;
  duckdb: Record<string, number>;
  pyarrow: Record<string, number>;
  record_type?: string;
  summary_ok?: boolean;
  records: number;
  missing: string[];
  different: string[];
  example?: unknown;
}

function check(out: string, input: string, format: 'parquet' | 'jsonl'): Report {
  const stdout = execFileSync(python!, [join('test', 'py', 'check_corpus.py'), out, input, format], { encoding: 'utf8', maxBuffer: 256 << 20, timeout: 600_000 });
  return JSON.parse(stdout) as Report;
}

/** The records a user's file holds: the trace fields and fields of their own, some named like our columns. */
function userRows(n: number, varying: boolean): Record<string, unknown>[] {
  return syntheticRecords(n, { seed: 13 }).map((r, i) => ({
    id: r.id,
    problem: r.problem,
    trace: r.trace ?? (r.steps ?? []).join('\n\n'),
    source: `bench-${i % 3}`, // named like the source= partition key
    decision: i % 2 ? 'gold-keep' : 'gold-drop', // and like decision=
    difficulty: i % 7,
    score: i / 8,
    flag: i % 5 === 0,
    note: i % 4 === 0 ? null : `note ${i}`,
    info: { lang: 'en', tags: ['t', String(i % 3)], weight: (i % 10) / 4 },
    ...(varying ? { varies: [1, 'two', { three: 3 }, [4], true][i % 5] } : {}),
  }));
}

const ranges = (n: number) => Math.ceil(n / 1000);

/** The committed parquet files of `table` (`shards list`), written one per line to a file for the python readers. */
async function listed(dir: string, out: string, table: string): Promise<string> {
  const r = await runCli(['shards', 'list', out, '--table', table, '--format', 'parquet']);
  expect(r.code, r.stderr).toBe(0);
  const file = join(dir, `${table}-${out.split('/').pop()!}.txt`);
  writeFileSync(file, r.stdout);
  return file;
}

/** pyarrow, DuckDB and polars read only the listed corpus files: rows per decision equal the decisions table. */
async function expectListedCorpus(dir: string, out: string, n: number, recordType: 'struct' | 'string'): Promise<ListedReport> {
  const stdout = execFileSync(python!, [join('test', 'py', 'read_corpus_listed.py'), await listed(dir, out, 'corpus'), await listed(dir, out, 'decisions')], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const rep = JSON.parse(stdout) as ListedReport;
  expect(Object.values(rep.decisions).reduce((a, b) => a + b, 0)).toBe(n);
  expect(Object.keys(rep.decisions).length).toBeGreaterThan(1);
  expect(rep.record_type).toBe(recordType);
  for (const reader of ['pyarrow', 'duckdb', 'polars'] as const) {
    expect(rep[reader], reader).toEqual({ per_decision: rep.decisions, distinct_ids: n, id_mismatch: 0 });
  }
  return rep;
}

describe.skipIf(!python)(`the curated corpus of a ${N}-record run`, () => {
  const dir = tempDir('corpus');
  const config = fastSimConfig(dir);
  const jsonl = join(dir, 'in.jsonl');
  const parquet = join(dir, 'in.parquet');

  beforeAll(() => {
    writeJsonl(jsonl, userRows(N, true));
    // The same records as Parquet, typed by pyarrow (the one varying field as its JSON text).
    execFileSync(python!, ['-c', `
import json, sys, pyarrow as pa, pyarrow.parquet as pq
rows = [json.loads(l) for l in open(sys.argv[1])]
for r in rows: r['varies'] = json.dumps(r['varies'])
pq.write_table(pa.Table.from_pylist(rows), sys.argv[2], row_group_size=1500)`, jsonl, parquet]);
  });

  const expectCorpus = (rep: Report, files: number) => {
    expect(rep.missing).toEqual([]);
    expect(rep.different, JSON.stringify(rep.example)).toEqual([]);
    expect(rep.records).toBe(N);
    expect(rep.dead_letters_glob).toBe(0); // zero-row parts: the glob finds files, and no rows
    expect(Object.values(rep.decisions).reduce((a, b) => a + b, 0)).toBe(N);
    expect(Object.keys(rep.decisions).length).toBeGreaterThan(1); // the test means something only with several decisions
    expect(rep.duckdb).toEqual(rep.decisions);
    expect(rep.pyarrow).toEqual(rep.decisions);
    expect(rep.corpus_files).toBe(files);
  };

  it('JSONL in: every field of every record survives as JSON text, counts per decision match the decisions table', async () => {
    const out = join(dir, 'out-jsonl');
    const r = await runCli(['run', '-c', config, '-i', jsonl, '-o', out, '--concurrency', '32', '--progress', 'none'], { progress: treeProbe(out) });
    expect(r.code, r.stderr).toBe(0);
    const rep = check(out, jsonl, 'parquet');
    expectCorpus(rep, 3 * ranges(N)); // keep, drop and review parts for every range, empty ones too
    expect(rep.record_type).toBe('string');
    expect(rep.schemas_equal).toBe(true);
    expect(rep.summary_ok).toBe(true);
    const listedRep = await expectListedCorpus(dir, out, N, 'string');
    expect(listedRep.files).toBe(3 * ranges(N)); // the listing names every part: one per decision and range, empty ones too
  }, LONG_TEST_MS);

  it('Parquet in: the record is a struct of the input columns with their own types', async () => {
    const out = join(dir, 'out-parquet');
    const r = await runCli(['run', '-c', config, '-i', parquet, '-o', out, '--concurrency', '32', '--progress', 'none'], { progress: treeProbe(out) });
    expect(r.code, r.stderr).toBe(0);
    const rep = check(out, parquet, 'parquet');
    expectCorpus(rep, 3 * ranges(N));
    expect(rep.record_type).toMatch(/^struct<id: string, problem: string, trace: string, source: string, decision: string, difficulty: int64, score: double, flag: bool, note: string, info: struct<lang: string, tags: list<\w+: string>, weight: double>, varies: string>$/);
    expect(rep.schemas_equal).toBe(true);
    const listedRep = await expectListedCorpus(dir, out, N, 'struct');
    expect(listedRep.files).toBe(3 * ranges(N));
  }, LONG_TEST_MS);

  it('--corpus jsonl with --format both: JSON lines under jsonl/, Arrow IPC under arrow/, Parquet alone in the table folders', async () => {
    const n = 600;
    const small = writeJsonl(join(dir, 'small.jsonl'), userRows(n, true));
    const out = join(dir, 'out-both');
    const r = await runCli(['run', '-c', config, '-i', small, '-o', out, '--range-records', '250', '--format', 'both', '--corpus', 'jsonl', '--progress', 'none'], { progress: treeProbe(out) });
    expect(r.code, r.stderr).toBe(0);
    const rep = check(out, small, 'jsonl');
    expect(rep.missing).toEqual([]);
    expect(rep.different, JSON.stringify(rep.example)).toEqual([]);
    expect(rep.records).toBe(n);
    expect(rep.duckdb).toEqual(rep.decisions);
    expect(rep.corpus_files).toBe(3 * 3);
    // README.md: the dataset card; _card/: where its schema parts were until each table had a part (docs/layout.md).
    expect(readdirSync(out).sort()).toEqual(['README.md', '_card', '_commits', '_lease', '_staging', 'arrow', 'dead_letters', 'decisions', 'defects', 'jsonl', 'steps', 'verdicts']);
    expect(readdirSync(join(out, '_card'))).toEqual([]);
    const roots = execFileSync(python!, ['-c', `
import sys, json, pyarrow.dataset as ds
out = sys.argv[1]
print(json.dumps({t: {'parquet': ds.dataset(f'{out}/{t}', partitioning='hive').count_rows(),
                      'ipc': ds.dataset(f'{out}/arrow/{t}', format='ipc', partitioning='hive').count_rows(),
                      'exts': sorted({f.rsplit('.', 1)[1] for f in ds.dataset(f'{out}/{t}').files})}
                  for t in ['verdicts', 'defects', 'steps', 'decisions', 'dead_letters']}))`, out], { encoding: 'utf8' });
    const byTable = JSON.parse(roots) as Record<string, { parquet: number; ipc: number; exts: string[] }>;
    expect(byTable.verdicts!.parquet).toBe(n);
    expect(byTable.dead_letters!.parquet).toBe(0);
    for (const [t, v] of Object.entries(byTable)) {
      expect(v.ipc, t).toBe(v.parquet);
      expect(v.exts, t).toEqual(['parquet']);
    }
  }, LONG_TEST_MS);
});

interface ListedReport {
  files: number;
  decisions: Record<string, number>;
  record_type: string;
  pyarrow: ReaderReport;
  duckdb: ReaderReport;
  polars: ReaderReport;
}
interface ReaderReport {
  per_decision: Record<string, number>;
  distinct_ids: number;
  id_mismatch: number;
}
