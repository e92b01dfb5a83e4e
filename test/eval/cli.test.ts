import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MISSING_DATA_MESSAGE, sharedDataDir } from '../../src/eval/data.js';
import type { EvalReport } from '../../src/eval/report.js';
import { runCli } from '../helpers/cli.js';
import { LONG_TEST_MS, treeProbe } from '../helpers/progress.js';

const tmp = mkdtempSync(join(tmpdir(), 'rj-eval-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const report = (dir: string) => JSON.parse(readFileSync(join(dir, 'eval.json'), 'utf8')) as EvalReport;

describe('reasoning-jury eval: usage errors', () => {
  it('rejects an unknown benchmark and a missing data path with exit code 2', async () => {
    const a = await runCli(['eval', '-b', 'nope']);
    expect(a.code).toBe(2);
    expect(a.stderr).toContain('--benchmark must be one of processbench');
    const b = await runCli(['eval', '-b', 'deltabench', '-d', join(tmp, 'absent')]);
    expect(b.code).toBe(2);
    expect(b.stderr).toContain('deltabench data not found');
  });
});

const dir = sharedDataDir();
describe.skipIf(!dir)(`reasoning-jury eval on ProcessBench with the simulator${dir ? '' : ` (skipped: ${MISSING_DATA_MESSAGE})`}`, () => {
  const out = join(tmp, 'run200');

  it('judges a 200-record sample and prints the table with bootstrap intervals', async () => {
    const r = await runCli(['eval', '-b', 'processbench', '-n', '200', '--seed', '3', '-o', out], { progress: treeProbe(out) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('[eval] judged 200/200');
    expect(r.stdout).toContain('## Step level (pooled over all steps)');
    expect(r.stdout).toMatch(/\| jury \(consolidation\) +\| \d+\.\d \[\d+\.\d, \d+\.\d\]/);
    expect(r.stdout).toContain('## processbench protocol');
    expect(r.stdout).toContain('## Cost (ratios to solo jury-0)');
    const rep = report(out);
    expect(rep.records).toMatchObject({ selected: 200, scored: 200, missing: 0, mismatched: 0 });
    expect(rep.options.resamples).toBe(10_000);
    expect(rep.systems.map((s) => s.system)).toEqual(['solo jury-0', 'solo jury-1', 'solo jury-2', 'union', 'majority', 'jury (consolidation)']);
    for (const s of rep.systems) {
      const b = s.step.balanced_f1;
      expect(b.lo! <= b.value! && b.value! <= b.hi!).toBe(true);
    }
    expect(readFileSync(join(out, 'eval.md'), 'utf8')).toContain('# Evaluation: processbench');
    expect(readFileSync(join(out, 'verdicts.jsonl'), 'utf8').trim().split('\n')).toHaveLength(200);
  }, LONG_TEST_MS);

  it('re-scores the written verdicts to the same numbers', async () => {
    const again = join(tmp, 'rescore');
    const r = await runCli(['eval', '-b', 'processbench', '--verdicts', join(out, 'verdicts.jsonl'), '-o', again]);
    expect(r.code, r.stderr).toBe(0);
    const a = report(out);
    const b = report(again);
    // Without -n the selection is what the verdicts name; with the run's -n/--seed it is the run's sample.
    expect(b.records).toMatchObject({ selected: 200, scored: 200, missing: 0 });
    expect(b.systems.map((s) => [s.system, s.step, s.protocol.metrics])).toEqual(a.systems.map((s) => [s.system, s.step, s.protocol.metrics]));
  });

  it('exports records for `run`, and scores the shards it writes (gold joined by record id)', async () => {
    const exported = join(tmp, 'pb.jsonl');
    const e = await runCli(['eval', '-b', 'processbench', '-n', '30', '--seed', '9', '--export', exported]);
    expect(e.code, e.stderr).toBe(0);
    const shards = join(tmp, 'shards');
    const run = await runCli(['run', '-i', exported, '-o', shards, '--progress', 'none', '--no-cache'], { progress: treeProbe(shards) });
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(shards, '_commits'))).toBe(true);
    const scored = join(tmp, 'shard-eval');
    const r = await runCli(['eval', '-b', 'processbench', '--verdicts', shards, '-o', scored, '--resamples', '500']);
    expect(r.code, r.stderr).toBe(0);
    const rep = report(scored);
    expect(rep.records).toMatchObject({ scored: 30, unmatched: 0, mismatched: 0 });
    expect(rep.systems.map((s) => s.system)).toEqual(['jury (shards)']);
    expect(rep.notes.join(' ')).toContain('No Phase 1 judgements');
  }, LONG_TEST_MS);
});
