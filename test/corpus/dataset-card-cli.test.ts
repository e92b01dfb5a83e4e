// The dataset card of real outputs (issue 38): `run` (and `decide`) write README.md, and Hugging
// Face `datasets` 5.2.0, offline, loads the corpus with `load_dataset(OUT)` and every table with
// `load_dataset(OUT, "<table>")`, rows equal to the Parquet files the manifests list, with files
// a table glob must not take (a Delta log checkpoint, staged parts, Arrow copies) lying around.
// Also: the card follows a resumed run, a run with no record still resolves every config (zero
// rows, all columns, streaming), and a card that cannot be written is one warning, not a failure.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { runCli } from '../helpers/cli.js';
import { LONG_TEST_MS, treeProbe } from '../helpers/progress.js';
import { fastSimConfig, pyenvPython, tempDir, writeJsonl } from '../helpers/run-setup.js';

const python = pyenvPython();

interface Loaded {
  rows: number;
  columns: string[];
  per_decision?: Record<string, number>;
}
type LoadResult = { train: Loaded } | { error: string };
interface ConfigReport {
  name: string;
  default: boolean;
  data_files: unknown;
  manifest: { rows: number; files: number; columns: string[] | null; per_decision: Record<string, number> };
  load: LoadResult;
  stream: LoadResult;
  keep_filtered?: LoadResult;
}
interface Report {
  configs: ConfigReport[];
  card_rows: Record<string, number>;
}

function checkCard(out: string): Report {
  const stdout = execFileSync(python!, [join('test', 'py', 'check_card.py'), out], { encoding: 'utf8', maxBuffer: 64 << 20, timeout: 600_000 });
  return JSON.parse(stdout) as Report;
}

const train = (r: LoadResult): Loaded => {
  expect(r, JSON.stringify(r)).toHaveProperty('train');
  return (r as { train: Loaded }).train;
};

/**
 * Every config loads what the manifests list: the same rows and columns, the corpus per decision.
 * A config with no row at all loads streaming (zero rows, all columns); without streaming
 * `datasets` 5.2.0 refuses any empty split (huggingface/datasets PR #8401, open), which the card says.
 */
function expectLoads(rep: Report, names: string[]): void {
  expect(rep.configs.map((c) => c.name)).toEqual(names);
  expect(rep.configs.filter((c) => c.default).map((c) => c.name)).toEqual([names[0]]);
  for (const c of rep.configs) {
    expect(rep.card_rows[c.name], c.name).toBe(c.manifest.rows);
    const streamed = train(c.stream);
    expect(streamed.rows, c.name).toBe(c.manifest.rows);
    expect(streamed.columns, c.name).toEqual(c.manifest.columns);
    if (c.manifest.rows === 0) {
      expect(c.load, c.name).toEqual({ error: 'ValueError: Instruction "train" corresponds to no data!' });
      continue;
    }
    const loaded = train(c.load);
    expect(loaded.rows, c.name).toBe(c.manifest.rows);
    expect(loaded.columns, c.name).toEqual(c.manifest.columns);
    if (c.name === 'corpus') {
      const nonEmpty = Object.fromEntries(Object.entries(c.manifest.per_decision).filter(([, n]) => n > 0)); // a decision without rows has only empty parts
      expect(loaded.per_decision).toEqual(nonEmpty);
      expect(train(c.keep_filtered!).rows).toBe(c.manifest.per_decision.keep);
    }
  }
}

/** Files next to the parts that no config may take: each would add rows or break the schema. */
function plantDecoys(out: string): void {
  const part = (table: string) => {
    const dir = join(out, table, 'source=file');
    return join(dir, readdirSync(dir).find((f) => f.endsWith('.parquet'))!);
  };
  for (const table of ['verdicts', 'decisions', 'corpus']) {
    mkdirSync(join(out, table, '_delta_log'), { recursive: true });
    // A checkpoint is Parquet of another schema; a decisions part stands in for it.
    copyFileSync(part('decisions'), join(out, table, '_delta_log', '00000000000000000010.checkpoint.parquet'));
  }
  mkdirSync(join(out, '_staging', 'x+0-x+9.0123456789abcdef', 'verdicts', 'source=file'), { recursive: true });
  copyFileSync(part('verdicts'), join(out, '_staging', 'x+0-x+9.0123456789abcdef', 'verdicts', 'source=file', 'part-x+0-x+9.parquet'));
}

const records = (n: number, seed: number) => syntheticRecords(n, { seed }).map((r) => ({ id: `s${seed}-${r.id}`, problem: r.problem, trace: r.trace ?? (r.steps ?? []).join('\n\n') }));

const TABLES = ['verdicts', 'defects', 'steps', 'decisions', 'dead_letters'];

describe.skipIf(!python)('the dataset card and datasets.load_dataset', () => {
  const dir = tempDir('card');

  it('run: the corpus by default and every table load; the card follows a resumed run; decide gets one too', async () => {
    const config = fastSimConfig(dir);
    const input = join(dir, 'in');
    mkdirSync(input);
    writeJsonl(join(input, 'a.jsonl'), records(50, 1));
    const out = join(dir, 'out');
    const run = () => runCli(['run', '-c', config, '-i', input, '-o', out, '--range-records', '20', '--format', 'both', '--progress', 'none'], { progress: treeProbe(out) });
    let r = await run();
    expect(r.code, r.stderr).toBe(0);
    expect(checkCard(out).card_rows.corpus).toBe(50);
    writeJsonl(join(input, 'b.jsonl'), records(30, 2)); // resumed: a.jsonl's ranges stay, b.jsonl's are added
    r = await run();
    expect(r.code, r.stderr).toBe(0);
    plantDecoys(out);
    const rep = checkCard(out);
    expectLoads(rep, ['corpus', ...TABLES]);
    expect(rep.card_rows.corpus).toBe(80);
    expect(rep.card_rows.verdicts).toBe(80);
    expect(Object.keys(rep.configs[0]!.manifest.per_decision).length).toBeGreaterThan(1);

    const policy = join(dir, 'strict.json');
    writeFileSync(policy, JSON.stringify({ rules: [{ name: 'any', min_impact: 'minor', decision: 'drop' }], default: 'keep' }));
    const decided = join(dir, 'decided');
    r = await runCli(['decide', '--policy', policy, '--shards', out, '--out', decided]);
    expect(r.code, r.stderr).toBe(0);
    expectLoads(checkCard(decided), ['corpus', 'decisions']);
  }, LONG_TEST_MS);

  it('run with verdict_details on and no corpus: verdicts is the default and verdict_details loads', async () => {
    const config = fastSimConfig(dir, { verdict_details: 'on' });
    const input = writeJsonl(join(dir, 'details.jsonl'), records(30, 3));
    const out = join(dir, 'out-details');
    const r = await runCli(['run', '-c', config, '-i', input, '-o', out, '--range-records', '10', '--corpus', 'off', '--progress', 'none'], { progress: treeProbe(out) });
    expect(r.code, r.stderr).toBe(0);
    const rep = checkCard(out);
    expectLoads(rep, ['verdicts', 'defects', 'steps', 'decisions', 'verdict_details', 'dead_letters']);
    expect(rep.card_rows.verdict_details).toBe(30);
  }, LONG_TEST_MS);

  it('a run with no record: every config resolves, zero rows with the columns of its table', async () => {
    const config = fastSimConfig(dir);
    const input = join(dir, 'empty.jsonl');
    writeFileSync(input, '');
    const out = join(dir, 'out-empty');
    const r = await runCli(['run', '-c', config, '-i', input, '-o', out, '--progress', 'none'], { progress: treeProbe(out) });
    expect(r.code, r.stderr).toBe(0);
    const rep = checkCard(out);
    expectLoads(rep, ['corpus', ...TABLES]);
    for (const c of rep.configs) {
      expect(c.manifest.files).toBe(0);
      expect(c.manifest.columns?.length, c.name).toBeGreaterThan(3); // the schema part's, as a part of the table has
    }
  }, LONG_TEST_MS);

  it('a card that cannot be written is one warning line; the run commits and exits 0', async () => {
    const config = fastSimConfig(dir);
    const input = writeJsonl(join(dir, 'small.jsonl'), records(20, 4));
    const out = join(dir, 'out-nocard');
    mkdirSync(join(out, 'README.md'), { recursive: true }); // a folder where the card goes
    const r = await runCli(['run', '-c', config, '-i', input, '-o', out, '--range-records', '10', '--progress', 'none'], { progress: treeProbe(out) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr.split('\n').filter((l) => l.includes('dataset card'))).toHaveLength(1);
    expect(readdirSync(join(out, '_commits'))).toHaveLength(2);
  }, LONG_TEST_MS);
});
