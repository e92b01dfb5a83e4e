import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { segmentRecord } from '../../src/segment/index.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { runCli } from '../helpers/cli.js';
import { LONG_TEST_MS, treeProbe } from '../helpers/progress.js';
import { fastSimConfig, pyenvPython, tempDir, writeJsonl } from '../helpers/run-setup.js';

const python = pyenvPython();
const skip = !python && process.env.CI !== 'true';
if (skip) console.warn('skipping run interop test: no Python with pyarrow and duckdb (scripts/pyenv.sh failed)');

// 800 records in 4 ranges of 200 give the readers the same shape (several files per table, every
// column type, every decision) as 2,000 in ranges of 500 did, at 40 % of the judging CPU.
const N = 800;

describe.skipIf(skip)(`a ${N}-record run is read by pyarrow and DuckDB`, () => {
  const records = syntheticRecords(N, { seed: 31 });
  let report: {
    pyarrow: Record<string, { rows: number; types: Record<string, string> }>;
    duckdb: Record<string, { rows: number; types: Record<string, string> }>;
    aggregates: Record<string, unknown> & { decisions: Record<string, number>; sample: unknown[] };
  };
  let summary = '';

  beforeAll(async () => {
    expect(python, 'scripts/pyenv.sh must provide pyarrow + duckdb in CI').toBeTruthy();
    const dir = tempDir('interop');
    const input = writeJsonl(join(dir, 'in.jsonl'), records);
    const out = join(dir, 'out');
    const res = await runCli(['run', '--config', fastSimConfig(dir), '--input', input, '--out', out, '--concurrency', '32', '--range-records', String(N / 4), '--progress', 'none'], { progress: treeProbe(out) });
    expect(res.code, res.stderr).toBe(0);
    summary = res.stdout;
    report = JSON.parse(execFileSync(python!, ['test/py/check_run.py', out], { encoding: 'utf8', maxBuffer: 64 << 20 }));
  }, LONG_TEST_MS);

  it('row counts match the input in both readers', () => {
    const nSteps = records.reduce((a, r) => a + segmentRecord(r).length, 0);
    for (const reader of ['pyarrow', 'duckdb'] as const) {
      const t = report[reader];
      expect(t.verdicts!.rows, reader).toBe(N);
      expect(t.decisions!.rows, reader).toBe(N);
      expect(t.steps!.rows, reader).toBe(nSteps);
      expect(t.defects!.rows, reader).toBe(report.aggregates.sum_n_defects);
      // no dead letters, but every table of a committed range has a part (issue 13): zero rows, read fine
      expect(t.dead_letters?.rows, reader).toBe(0);
    }
    expect(report.aggregates.distinct_verdict_ids).toBe(N);
    expect(report.aggregates.sum_n_steps).toBe(nSteps);
    expect(summary).toMatch(new RegExp(`records in\\s+${N}\\b`));
    expect(summary).toMatch(/ranges committed\s+4/);
  });

  it('types are real types: no string-typed numbers, lists as lists', () => {
    const pa = report.pyarrow;
    expect(pa.verdicts!.types).toMatchObject({ n_steps: 'int32', n_defects: 'int32', tokens_in: 'int64', source_offset: 'int64', cost_usd: 'double', confidence: 'double', degraded: 'bool' });
    expect(pa.defects!.types).toMatchObject({ statement_refs: expect.stringMatching(/^list<.*int32/), voters: expect.stringMatching(/^list<.*string/), vote_count: 'int32' });
    expect(pa.steps!.types).toMatchObject({ step_index: 'int32', label: 'bool', defect_ids: expect.stringMatching(/^list</) });
    expect(pa.decisions!.types).toMatchObject({ n_fatal: 'int32', fatal_step_rate: 'double' });
    const dd = report.duckdb;
    expect(dd.verdicts!.types).toMatchObject({ n_steps: 'INTEGER', tokens_in: 'BIGINT', cost_usd: 'DOUBLE', degraded: 'BOOLEAN', source_offset: 'BIGINT' });
    expect(dd.defects!.types).toMatchObject({ statement_refs: 'INTEGER[]', voters: 'VARCHAR[]' });
    expect(dd.steps!.types).toMatchObject({ label: 'BOOLEAN', defect_ids: 'VARCHAR[]' });
  });

  it('values hang together across tables', () => {
    const a = report.aggregates;
    expect(a.refs_beyond_steps).toBe(0);
    expect(a.max_ref).toBeGreaterThan(1);
    expect(a.labelled_steps as number).toBeGreaterThan(0);
    expect(a.labelled_steps as number).toBeLessThanOrEqual(a.steps_citing_defects as number);
    // every record here got a verdict, so every step is judged: no null label
    expect(a.unjudged_steps).toBe(0);
    expect(a.null_labels).toBe(0);
    // The default policy drops every verdict carrying a fatal defect (none failed here).
    expect(a.fatal_dropped).toBe(a.verdicts_with_fatal);
    expect(Object.values(a.decisions).reduce((x, y) => x + y, 0)).toBe(N);
    expect(a.sum_tokens_in as number).toBeGreaterThan(N * 4 * 100);
    const first = records[0]!;
    expect(a.sample).toEqual([first.id, segmentRecord(first).length, 'file', 0, first.meta.generator]);
  });
});
