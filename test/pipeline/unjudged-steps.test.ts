/**
 * Steps of a record without a verdict were never judged: pyarrow must read their
 * label and max_impact as null, not as `false` ("clean step"). Two of three jurors are cut at
 * max_tokens on every record, so no record reaches min_jurors (2) and none gets a verdict.
 */
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
if (skip) console.warn('skipping unjudged-steps interop test: no Python with pyarrow (scripts/pyenv.sh failed)');

const N = 12;

describe.skipIf(skip)('steps of records without a verdict, as pyarrow reads them', () => {
  const records = syntheticRecords(N, { seed: 5 });
  let report: {
    steps: number;
    verdicts: number;
    unjudged_records: number;
    unjudged_steps: number;
    label: { type: string; nullable: boolean };
    max_impact_nullable: boolean;
    null_labels: number;
    unjudged_null_labels: number;
    unjudged_null_impacts: number;
    false_labels: number;
  };

  beforeAll(async () => {
    expect(python, 'scripts/pyenv.sh must provide pyarrow + duckdb in CI').toBeTruthy();
    const dir = tempDir('unjudged');
    const input = writeJsonl(join(dir, 'in.jsonl'), records);
    const out = join(dir, 'out');
    // 3 tokens cannot hold even {"negatives":[]}: those two seats fail as truncated
    const jurors = [
      { id: 'jury-0', endpoint: 'sim', model: 'sim-juror-a' },
      { id: 'jury-1', endpoint: 'sim', model: 'sim-juror-b', max_tokens: 3 },
      { id: 'jury-2', endpoint: 'sim', model: 'sim-juror-c', max_tokens: 3 },
    ];
    const res = await runCli(['run', '--config', fastSimConfig(dir, { jurors }), '--input', input, '--out', out, '--progress', 'none'], { progress: treeProbe(out) });
    expect(res.code, res.stderr).toBe(0);
    report = JSON.parse(execFileSync(python!, ['test/py/check_unjudged.py', out], { encoding: 'utf8' }));
  }, LONG_TEST_MS);

  it('every step row is there, with a nullable bool label', () => {
    const nSteps = records.reduce((a, r) => a + segmentRecord(r).length, 0);
    expect(report.verdicts).toBe(N);
    expect(report.steps).toBe(nSteps);
    expect(report.label).toEqual({ type: 'bool', nullable: true });
    expect(report.max_impact_nullable).toBe(true);
  });

  it('label and max_impact are null on every unjudged step; none reads as clean', () => {
    expect(report.unjudged_records).toBe(N);
    expect(report.unjudged_steps).toBe(report.steps);
    expect(report.unjudged_null_labels).toBe(report.steps);
    expect(report.unjudged_null_impacts).toBe(report.steps);
    expect(report.null_labels).toBe(report.steps);
    expect(report.false_labels).toBe(0);
  });
});
