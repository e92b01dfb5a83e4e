/**
 * `eval repair` without --originals: every judged record's original correctness is derived from
 * the output's own corpus (mapping, extraction and comparison as the repair step does them), and
 * gives the same corpus accuracies as an originals file built independently from the input.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import type { RepairAnalysis } from '../../src/eval/repair/analyze.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { runCli } from '../helpers/cli.js';
import { LONG_TEST_MS } from '../helpers/progress.js';
import { fastSimConfig, tempDir, writeJsonl } from '../helpers/run-setup.js';

const N = 150;

/** A third without a reference; of the rest, half whose final answer is right. Problems of 5 traces. */
function records() {
  return syntheticRecords(N, { seed: 33 }).map((r, i) => {
    const said = /(\d+)\s*$/.exec(r.final_solution!)![1]!;
    const ref = i % 3 === 0 ? {} : { answer: i % 2 ? said : String(Number(said) + 1) };
    return { ...r, prob: `p${Math.floor(i / 5)}`, ...ref };
  });
}

/** The originals file built from the input alone: the trace's last number against the answer. */
function originalsFile(dir: string, recs: ReturnType<typeof records>): string {
  const lines = recs.map((r) => {
    const said = /(\d+)\s*$/.exec(r.final_solution!)![1]!;
    const answer = (r as { answer?: string }).answer;
    return JSON.stringify({ record_id: r.id, problem_id: r.prob, correct: answer === undefined ? null : answer === said });
  });
  const file = join(dir, 'originals.jsonl');
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

const BOOT = ['--boot-resamples', '300', '--boot-seed', '4', '--format', 'json'];

async function evalJson(args: string[]): Promise<RepairAnalysis> {
  const r = await runCli(['eval', 'repair', ...args, ...BOOT]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as RepairAnalysis;
}

describe('eval repair derives the originals from the output', () => {
  it('run with repair on, then eval repair without --originals = with an originals file of the same data', async () => {
    const dir = tempDir('repair-eval-originals');
    const recs = records();
    const input = writeJsonl(join(dir, 'in.jsonl'), recs);
    const config = fastSimConfig(dir, {
      mode: 'single',
      jurors: [{ id: 'jury-0', endpoint: 'sim', model: 'sim-juror-a' }],
      input: { mapping: { reference_answer: 'answer', problem_id: 'prob' } },
      repair: { generator: { id: 'gen', endpoint: 'sim', model: 'sim-generator' } },
    });
    const out = join(dir, 'out');
    const run = await runCli(['run', '--config', config, '--input', input, '--out', out, '--range-records', '50', '--progress', 'none']);
    expect(run.code, run.stderr).toBe(0);

    const derived = await evalJson([out, '-c', config]);
    const given = await evalJson([out, '-c', config, '--originals', originalsFile(dir, recs)]);
    expect(derived.originals).toEqual({ from: 'corpus', location: out, records: N, no_reference: N / 3 });
    expect(given.originals).toMatchObject({ from: 'file', records: N, no_reference: N / 3 });
    expect(derived.corpus).not.toBeNull();
    expect(derived.corpus!.records).toBe(N - N / 3);
    expect(derived.corpus!.conflicts).toBe(0);
    expect(derived.corpus!.gates.map((g) => g.condition)).toEqual(['steps', 'full']);
    expect(derived.corpus!.gates.every((g) => g.retried > 0)).toBe(true);
    // The same corpus accuracies, intervals included (same problems, same bootstrap draws).
    expect(derived.corpus).toEqual(given.corpus);
    expect(derived.corpus!.before.value).toBeCloseTo(0.5, 1);

    const md = await runCli(['eval', 'repair', out, '-c', config, '--boot-resamples', '300']);
    expect(md.code, md.stderr).toBe(0);
    expect(md.stdout).toContain(`derived from the corpus of ${out}`);
    expect(md.stdout).toContain(`${N} records, ${N / 3} without a reference answer`);

    // A config whose mapping has no reference: every original is reference-less, none is guessed.
    const raw = YAML.parse(readFileSync(config, 'utf8')) as Record<string, unknown>;
    const noRef = join(dir, 'noref.yaml');
    writeFileSync(noRef, YAML.stringify({ ...raw, input: { mapping: { problem_id: 'prob' } } }));
    const blind = await evalJson([out, '-c', noRef]);
    expect(blind.originals).toMatchObject({ from: 'corpus', records: N, no_reference: N });
    expect(blind.notes.join('\n')).toMatch(/None of the 150 original records has a reference answer under this input.mapping/);
  }, LONG_TEST_MS);

  it('repair run over shards: --judged gives the corpus; an output without a corpus says so', async () => {
    const dir = tempDir('repair-eval-judged');
    const recs = records();
    const input = writeJsonl(join(dir, 'in.jsonl'), recs);
    const base = { mode: 'single', jurors: [{ id: 'jury-0', endpoint: 'sim', model: 'sim-juror-a' }], input: { mapping: { reference_answer: 'answer', problem_id: 'prob' } } };
    const plain = fastSimConfig(dir, base);
    const out = join(dir, 'out');
    const judged = await runCli(['run', '--config', plain, '--input', input, '--out', out, '--range-records', '50', '--progress', 'none']);
    expect(judged.code, judged.stderr).toBe(0);
    const withRepair = join(dir, 'repair.yaml');
    writeFileSync(withRepair, YAML.stringify({ ...YAML.parse(readFileSync(plain, 'utf8')), repair: { generator: { id: 'gen', endpoint: 'sim', model: 'sim-generator' } } }));
    const rep = join(dir, 'rep');
    const r = await runCli(['repair', 'run', out, '-c', withRepair, '-o', rep]);
    expect(r.code, r.stderr).toBe(0);

    const derived = await evalJson([rep, '-c', withRepair, '--judged', out]);
    const given = await evalJson([rep, '-c', withRepair, '--originals', originalsFile(dir, recs)]);
    expect(derived.originals).toMatchObject({ from: 'corpus', location: out, records: N, no_reference: N / 3 });
    expect(derived.corpus).not.toBeNull();
    expect(derived.corpus).toEqual(given.corpus);

    // The repairs output itself has no corpus: no corpus accuracy, and the note says why.
    const alone = await evalJson([rep, '-c', withRepair]);
    expect(alone.corpus).toBeNull();
    expect(alone.originals).toBeNull();
    expect(alone.notes.join('\n')).toMatch(/has no committed corpus/);
  }, LONG_TEST_MS);
});
