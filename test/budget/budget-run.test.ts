import { join } from 'node:path';
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { runJob, type RunJobOptions } from '../../src/api/run-job.js';
import { listCommitted } from '../../src/pipeline/commit/shard-commit.js';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import type { StageCounters } from '../../src/pipeline/stage.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { fastSimConfig, tempDir, writeJsonl } from '../helpers/run-setup.js';
import { LONG_TEST_MS } from '../helpers/progress.js';
import { runCli } from '../helpers/cli.js';

const N = 60;
const RANGE = 10;

interface Outcome {
  counters: StageCounters;
  budget?: string;
}

async function run(config: string, input: string, out: string, extra: Partial<RunJobOptions> = {}): Promise<Outcome> {
  let budget: string | undefined;
  const opts: RunJobOptions = { config, input, out, formats: ['parquet'], concurrency: 4, maxRecords: RANGE, maxChars: 64 * 1024 * 1024, resume: true, cache: false, log: { format: 'text', debug: false }, ...extra };
  const counters = await runJob(opts, { signal: new AbortController().signal, onTotal: () => undefined, onProgress: () => undefined, onBudgetStop: (r) => (budget = r) });
  return { counters, ...(budget !== undefined ? { budget } : {}) };
}

/** Per committed range: records and the usage its manifest recorded. */
async function ranges(out: string) {
  return (await listCommitted(new LocalObjectStore(out))).map((m) => ({ records: m.range!.records, tokens: m.range!.usage!.tokens_in + m.range!.usage!.tokens_out, usd: m.range!.usage!.cost_usd }));
}

/** The fast simulated jury with every model priced (a record with an unpriced call has cost null). */
function pricedConfig(dir: string, extra: Record<string, unknown> = {}): string {
  const price = { input_per_mtok: 0.15, output_per_mtok: 0.62 };
  return fastSimConfig(dir, { prices: Object.fromEntries(['sim-juror-a', 'sim-juror-b', 'sim-juror-c', 'sim-consolidator'].map((m) => [m, price])), ...extra });
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe('budgets', () => {
  it('budget_tokens stops within one range of the cap, commits only judged records, and the same command resumes to the end with a raised cap', async () => {
    const dir = tempDir('budget');
    const config = pricedConfig(dir);
    const input = writeJsonl(join(dir, 'in.jsonl'), syntheticRecords(N, { seed: 7 }));

    // A reference run without a budget: what the whole input costs, and the largest range.
    const ref = await run(config, input, join(dir, 'ref'));
    const refRanges = await ranges(join(dir, 'ref'));
    const total = ref.counters.tokens_in + ref.counters.tokens_out;
    expect(sum(refRanges.map((r) => r.tokens))).toBe(total); // manifests agree with the summary
    const oneRange = Math.max(...refRanges.map((r) => r.tokens));
    const cap = Math.round(total * 0.4);

    const out = join(dir, 'out');
    const first = await run(config, input, out, { budgetTokens: cap });
    expect(first.budget).toMatch(/^budget_tokens \d+ reached: \d+ tokens spent/);
    const afterFirst = await ranges(out);
    const spent = sum(afterFirst.map((r) => r.tokens));
    expect(spent).toBeGreaterThanOrEqual(cap);
    expect(spent - cap).toBeLessThanOrEqual(oneRange);
    const committed = sum(afterFirst.map((r) => r.records));
    expect(committed).toBeLessThan(N);
    expect(first.counters.records_committed).toBe(committed);
    // Nothing unjudged committed: every committed record has a verdict, none became a dead letter.
    expect(first.counters.dead_letters).toBe(0);
    expect((await readCommittedRows(new LocalObjectStore(out), 'verdicts')).length).toBe(committed);

    // The cap is cumulative: the same command with the same cap reads nothing more.
    const again = await run(config, input, out, { budgetTokens: cap });
    expect(again.budget).toMatch(/reached/);
    expect(again.counters.judged).toBe(0);
    expect(again.counters.read).toBe(0);

    // Raised: it judges exactly the rest.
    const rest = await run(config, input, out, { budgetTokens: total * 10 });
    expect(rest.budget).toBeUndefined();
    expect(rest.counters.skipped_committed).toBe(committed);
    expect(rest.counters.judged).toBe(N - committed);
    const verdicts = await readCommittedRows(new LocalObjectStore(out), 'verdicts');
    const ids = verdicts.map((v) => v.record_id as string).sort();
    expect(new Set(ids).size).toBe(N);
    expect(ids).toEqual(syntheticRecords(N, { seed: 7 }).map((r) => r.id).sort());
    // Counts reconcile: the two invocations' spend is the reference run's, record by record.
    const final = await ranges(out);
    expect(sum(final.map((r) => r.records))).toBe(N);
    expect(sum(final.map((r) => r.tokens))).toBe(total);
    expect(sum(verdicts.map((v) => (v.tokens_in as number) + (v.tokens_out as number)))).toBe(total);
  }, LONG_TEST_MS);

  it('budget_usd from the config stops the run the same way and says so', async () => {
    const dir = tempDir('budget-usd');
    const config = pricedConfig(dir);
    const input = writeJsonl(join(dir, 'in.jsonl'), syntheticRecords(30, { seed: 3 }));
    const ref = await run(config, input, join(dir, 'ref'));
    const raw = YAML.parse(readFileSync(config, 'utf8')) as Record<string, unknown>;
    writeFileSync(config, YAML.stringify({ ...raw, budget_usd: ref.counters.cost_usd / 3 }));
    const out = join(dir, 'out');
    const first = await run(config, input, out);
    expect(first.budget).toMatch(/^budget_usd [\d.]+ reached: [\d.]+ USD spent/);
    const usd = sum((await ranges(out)).map((r) => r.usd));
    expect(usd).toBeGreaterThanOrEqual(ref.counters.cost_usd / 3 - 1e-12);
    expect(first.counters.records_committed).toBeLessThan(30);
    const rest = await run(config, input, out, { budgetUsd: ref.counters.cost_usd * 10 });
    expect(rest.budget).toBeUndefined();
    expect(first.counters.records_committed + rest.counters.records_committed).toBe(30);
  }, LONG_TEST_MS);

  it('repair spend counts: a repair-heavy run stops on a cap its verdicts alone never reach, and a resume reads the retries back from the manifests', async () => {
    const dir = tempDir('budget-repair');
    const records = syntheticRecords(N, { seed: 11 }).map((r, i) => ({ ...r, answer: i % 2 ? /(\d+)\s*$/.exec(r.final_solution!)![1]! : '1001' }));
    const input = writeJsonl(join(dir, 'in.jsonl'), records);
    const config = pricedConfig(dir, {
      mode: 'single',
      jurors: [{ id: 'jury-0', endpoint: 'sim', model: 'sim-juror-a' }],
      input: { mapping: { reference_answer: 'answer' } },
      repair: { generator: { id: 'gen', endpoint: 'sim', model: 'sim-generator' }, attempts: 3 },
    });
    const ref = await run(config, input, join(dir, 'ref'));
    const refStore = new LocalObjectStore(join(dir, 'ref'));
    const tokensOf = (rows: Array<Record<string, unknown>>) => sum(rows.map((r) => (r.tokens_in as number) + (r.tokens_out as number)));
    const verdictTokens = tokensOf(await readCommittedRows(refStore, 'verdicts'));
    const repairTokens = tokensOf(await readCommittedRows(refStore, 'repairs'));
    const total = ref.counters.tokens_in + ref.counters.tokens_out;
    expect(repairTokens).toBeGreaterThan(verdictTokens); // repair-heavy
    expect(total).toBe(verdictTokens + repairTokens); // the counters count the retries
    expect(sum((await ranges(join(dir, 'ref'))).map((r) => r.tokens))).toBe(total); // and so do the manifests

    // Above what every verdict of the input costs together, below what the run costs with its retries.
    const cap = Math.round(verdictTokens + repairTokens / 2);
    const out = join(dir, 'out');
    const first = await run(config, input, out, { budgetTokens: cap });
    expect(first.budget).toMatch(/^budget_tokens \d+ reached/);
    const committed = sum((await ranges(out)).map((r) => r.records));
    expect(committed).toBeLessThan(N);
    expect(first.counters.dead_letters).toBe(0);
    expect(sum((await ranges(out)).map((r) => r.tokens))).toBeGreaterThanOrEqual(cap);

    // Resumed with the same cap: the committed ranges' retries are spend already, nothing more is read.
    const again = await run(config, input, out, { budgetTokens: cap });
    expect(again.budget).toMatch(/reached: \d+ tokens spent \(\d+ by committed ranges of earlier runs, 0 by this one\)/);
    expect(again.counters.read).toBe(0);

    const rest = await run(config, input, out, { budgetTokens: total * 10 });
    expect(rest.budget).toBeUndefined();
    expect(first.counters.records_committed + rest.counters.records_committed).toBe(N);
    expect(sum((await ranges(out)).map((r) => r.tokens))).toBe(total);
  }, LONG_TEST_MS);

  it('run --budget-tokens: the summary says which cap stopped it and how to go on; a bad value is refused', async () => {
    const dir = tempDir('budget-cli');
    const config = pricedConfig(dir);
    const input = writeJsonl(join(dir, 'in.jsonl'), syntheticRecords(12, { seed: 5 }));
    const out = join(dir, 'out');
    const res = await runCli(['run', '-c', config, '-i', input, '-o', out, '--progress', 'none', '--concurrency', '2', '--range-records', '4', '--budget-tokens', '1']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/stopped by budget: budget_tokens 1 reached: \d+ tokens spent \(0 by committed ranges of earlier runs, \d+ by this one\)\nraise budget_usd \/ budget_tokens/);
    expect(res.stderr).toMatch(/stopping: budget_tokens 1 reached/);
    const committed = sum((await ranges(out)).map((r) => r.records));
    expect(committed).toBeGreaterThan(0);
    expect(committed).toBeLessThan(12);
    const bad = await runCli(['run', '-c', config, '-i', input, '-o', out, '--budget-usd', 'lots']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--budget-usd must be a positive number/);
  }, LONG_TEST_MS);

  it('--budget-usd with no priced model is refused at start with one line, not silently never reached', async () => {
    const dir = tempDir('budget-unpriced');
    const config = fastSimConfig(dir, { prices: {} });
    const input = writeJsonl(join(dir, 'in.jsonl'), syntheticRecords(4, { seed: 5 }));
    const out = join(dir, 'out');
    const res = await runCli(['run', '-c', config, '-i', input, '-o', out, '--progress', 'none', '--budget-usd', '0.01']);
    expect(res.code).toBe(2);
    const lines = res.stderr.trim().split('\n').filter((l) => !/has no price/.test(l));
    expect(lines).toEqual(['reasoning-jury: --budget-usd 0.01: no model of the config has a price under prices:, so no cost is ever counted; add prices or cap with --budget-tokens']);
    expect(await ranges(out).catch(() => [])).toEqual([]);
  }, LONG_TEST_MS);
});
