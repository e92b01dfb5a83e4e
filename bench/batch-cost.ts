import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import type { TraceRecord } from '../schemas/trace.js';
import { loadBenchmark } from '../src/eval/adapters/index.js';
import { MISSING_DATA_MESSAGE, sharedDataDir } from '../src/eval/data.js';
import { goldOf } from '../src/eval/gold.js';
import { sampleRecords } from '../src/eval/run.js';
import { DEFAULT_SCORE_OPTIONS, scoreSystems, type SystemScore } from '../src/eval/score.js';
import { readVerdictSource } from '../src/eval/verdicts-io.js';
import { readCommittedRows } from '../src/pipeline/commit/shard-read.js';
import { LocalObjectStore } from '../src/pipeline/storage/object-store.js';
import { buildGoldIndex, parseProfile, type RunningSimulator, startSimulator } from '../src/sim/index.js';
import { fmt } from './common.js';
import { frontierProfile } from './frontier.js';

/**
 * Dollars per record of the jury online and through the Batch API (issue 39), with the step
 * Balanced F1 and the ProcessBench average F1 of each, on one seeded ProcessBench sample:
 * the real CLI (`node dist/cli/main.js run`, `run --batch`) against the juror simulator's
 * OpenAI-compatible server and Batch API, jurors of the cascade frontier's profile
 * (bench/frontier.ts, misses independent). Every model is priced at OpenAI's published
 * gpt-4o-mini rates (PRICE below). A batch run must make no online chat call: asserted.
 *
 * Env: BATCH_COST_N (records, default 600, the frontier benchmark's sample), BATCH_COST_PARTS (comma list of `cost`, `rules`,
 * `rss`; default `cost,rules`), BATCH_COST_RSS (record counts for the memory part, default
 * 5000,10000,20000), BATCH_COST_HEAP_MB (`run --max-heap-mb` there; default the CLI's 1024).
 */

/**
 * OpenAI API pricing, gpt-4o-mini (USD per 1M tokens): $0.15 input / $0.60 output online, and the
 * Batch API's $0.075 / $0.30 (half). Published at the model's launch (2024-07-18) and still the
 * listed rates on openai.com/api/pricing in 2026 (see docs/benchmarks.md, "Batch inference").
 */
export const PRICE = { input_per_mtok: 0.15, output_per_mtok: 0.6, batch_input_per_mtok: 0.075, batch_output_per_mtok: 0.3 };
export const PRICE_SOURCE = 'OpenAI gpt-4o-mini list prices: $0.15 / $0.60 per M tokens in / out online, Batch API $0.075 / $0.30';

const MODELS = ['sim-juror-a', 'sim-juror-b', 'sim-juror-c', 'sim-consolidator'];
const CLI = fileURLToPath(new URL('../cli/main.js', import.meta.url));

const cascade = (c: Record<string, unknown>) => ({ phase1: { strategy: 'cascade', cascade: c } });

/** The cheap cascade of the README (1.59× a single judge's tokens in the frontier benchmark). */
export const CHEAP_CASCADE = { mode: 'union', ...cascade({ start: 1, add: 'one', rules: ['empty'] }) };

/** Cascade rules tried against full consolidation (the search of issue 39; all online, the batch price is a constant factor). */
export const RULES: Record<string, Record<string, unknown>> = {
  'union, 1+1, empty (README)': CHEAP_CASCADE,
  'consolidation, 1+1, empty': { mode: 'consolidation', ...cascade({ start: 1, add: 'one', rules: ['empty'] }) },
  'consolidation, 1+1, failed (one juror + consolidator)': { mode: 'consolidation', ...cascade({ start: 1, add: 'one', rules: ['failed'] }) },
  'consolidation, 1+1, empty + fatal': { mode: 'consolidation', ...cascade({ start: 1, add: 'one', rules: ['empty', 'fatal'] }) },
  'majority, 1+1, empty': { mode: 'majority', ...cascade({ start: 1, add: 'one', rules: ['empty'] }) },
  'consolidation, 1+all, empty': { mode: 'consolidation', ...cascade({ start: 1, add: 'all', rules: ['empty'] }) },
  'consolidation, 1+all, empty + any_finding': { mode: 'consolidation', ...cascade({ start: 1, add: 'all', rules: ['empty', 'any_finding'] }) },
  'consolidation, 1+all, any_finding': { mode: 'consolidation', ...cascade({ start: 1, add: 'all', rules: ['any_finding'] }) },
  'consolidation, 2+1, default rules': { mode: 'consolidation', ...cascade({ start: 2, add: 'one' }) },
  'consolidation, 2+1, disagree_step + empty': { mode: 'consolidation', ...cascade({ start: 2, add: 'one', rules: ['disagree_step', 'empty'] }) },
  'consolidation, 2+1, disagree_step': { mode: 'consolidation', ...cascade({ start: 2, add: 'one', rules: ['disagree_step'] }) },
  'consolidation, 2+1, contested': { mode: 'consolidation', ...cascade({ start: 2, add: 'one', rules: ['contested'] }) },
  'majority, 2+1, disagree_step': { mode: 'majority', ...cascade({ start: 2, add: 'one', rules: ['disagree_step'] }) },
};

interface RunResult {
  name: string;
  out: string;
  records: number;
  tokens: number;
  usd: number;
  seconds: number;
  online_calls: number;
  batches: number;
  peak_rss_mb: number | null;
  peak_waiting_requests: number;
}

interface Ctx {
  dir: string;
  sim: RunningSimulator;
  input: string;
}

function writeJsonl(path: string, records: readonly TraceRecord[]): string {
  writeFileSync(path, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return path;
}

function configFile(ctx: Ctx, name: string, over: Record<string, unknown>, batch: Record<string, unknown>): string {
  const path = join(ctx.dir, `${name.replace(/[^a-z0-9]+/gi, '-')}.yaml`);
  writeFileSync(
    path,
    YAML.stringify({
      endpoints: { sim: { kind: 'openai', base_url: ctx.sim.url, max_concurrency: 64, batch } },
      jurors: MODELS.slice(0, 3).map((model, i) => ({ id: `jury-${i}`, endpoint: 'sim', model })),
      consolidator: { id: 'consolidator', endpoint: 'sim', model: 'sim-consolidator' },
      segmentation: { mode: 'given' },
      cache: { enabled: false, dir: join(ctx.dir, 'cache') },
      prices: Object.fromEntries(MODELS.map((m) => [m, PRICE])),
      ...over,
    }),
  );
  return path;
}

/** The CLI as a child (the simulator lives in this process, so the wait must not block it), under /usr/bin/time for its peak RSS. */
async function runCli(args: readonly string[], timeFile: string | null): Promise<{ code: number; stdout: string; stderr: string }> {
  const cmd = timeFile ? '/usr/bin/time' : process.execPath;
  const argv = timeFile ? ['-f', '%M', '-o', timeFile, process.execPath, CLI, ...args] : [CLI, ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-20_000)));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** One `run` of the sample (or `input`), online or `--batch`; cost and tokens from the committed verdict rows. */
async function judge(ctx: Ctx, name: string, over: Record<string, unknown>, opts: { batch: boolean; input?: string; expect?: number; concurrency?: number; batchKeys?: Record<string, unknown>; rss?: boolean; maxHeapMb?: number }): Promise<RunResult> {
  const out = join(ctx.dir, `out-${name.replace(/[^a-z0-9]+/gi, '-')}`);
  const cfg = configFile(ctx, name, over, { quiet_ms: 300, poll_interval_ms: 100, ...opts.batchKeys });
  const args = ['run', '-c', cfg, '-i', opts.input ?? ctx.input, '-o', out, '--progress', 'none', '--concurrency', String(opts.concurrency ?? 32)];
  if (opts.batch) args.push('--batch');
  if (opts.maxHeapMb) args.push('--max-heap-mb', String(opts.maxHeapMb));
  const timeFile = opts.rss ? join(ctx.dir, `${name.replace(/[^a-z0-9]+/gi, '-')}.time`) : null;
  const before = ctx.sim.batchStats();
  let peakWaiting = 0;
  const poll = opts.batch
    ? setInterval(() => {
        const s = ctx.sim.batchStats();
        const waiting = s.accepted.filter((b) => !['completed', 'expired', 'failed', 'cancelled'].includes(b.status)).reduce((n, b) => n + b.requests, 0);
        peakWaiting = Math.max(peakWaiting, waiting);
        if (process.env.BATCH_COST_DEBUG) process.stderr.write(`${((performance.now() - t0) / 1000).toFixed(1)} s: ${s.accepted.map((b) => `${b.seq}:${b.status}:${b.requests}`).join(' ')}\n`);
      }, 1000)
    : null;
  const t0 = performance.now();
  const res = await runCli(args, timeFile);
  const seconds = (performance.now() - t0) / 1000;
  if (poll) clearInterval(poll);
  if (res.code !== 0) throw new Error(`batch-cost: ${name} exited ${res.code}: ${res.stderr.slice(-2000)}`);
  const after = ctx.sim.batchStats();
  const onlineCalls = after.online.chat_calls - before.online.chat_calls;
  const batches = after.accepted.length - before.accepted.length;
  if (opts.batch && onlineCalls !== 0) throw new Error(`batch-cost: ${name} made ${onlineCalls} online chat calls in batch mode`);
  if (opts.batch && batches === 0) throw new Error(`batch-cost: ${name} submitted no batch`);
  const rows = await readCommittedRows(new LocalObjectStore(out), 'verdicts', 'parquet', { columns: ['record_id', 'tokens_in', 'tokens_out', 'cost_usd', 'error'] });
  if (opts.expect !== undefined && rows.length !== opts.expect) throw new Error(`batch-cost: ${name} committed ${rows.length} of ${opts.expect} verdicts`);
  const failed = rows.filter((r) => r.error !== null && r.error !== undefined).length;
  if (failed) throw new Error(`batch-cost: ${name}: ${failed} verdicts failed`);
  const peak = timeFile ? Number(readFileSync(timeFile, 'utf8').trim().split('\n').at(-1)) / 1024 : null;
  return {
    name,
    out,
    records: rows.length,
    tokens: rows.reduce((a, r) => a + Number(r.tokens_in) + Number(r.tokens_out), 0) / rows.length,
    usd: rows.reduce((a, r) => a + Number(r.cost_usd), 0) / rows.length,
    seconds,
    online_calls: onlineCalls,
    batches,
    peak_rss_mb: peak,
    peak_waiting_requests: peakWaiting,
  };
}

/** Step Balanced F1 (minor+, first-error labels) and ProcessBench average F1 of each run, paired bootstrap on the same records. */
async function score(golds: ReturnType<typeof goldOf>[], runs: readonly RunResult[]): Promise<SystemScore[]> {
  const systems = [];
  for (const r of runs) {
    const src = await readVerdictSource(r.out);
    if (src.kind !== 'shards') throw new Error('expected shards');
    systems.push({ name: r.name, kind: 'run', predictions: src.predictions });
  }
  return scoreSystems('processbench', golds, systems, { ...DEFAULT_SCORE_OPTIONS, resamples: 2_000 });
}

const pct = (x: number | null) => (x === null ? '–' : fmt(x * 100, 1));
const ci = (e: { value: number | null; lo: number | null; hi: number | null }) => `${pct(e.value)} (${pct(e.lo)}–${pct(e.hi)})`;

async function withSim<T>(records: readonly TraceRecord[], batch: Record<string, unknown>, f: (ctx: Ctx) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'rj-batch-cost-'));
  const sim = await startSimulator({ profile: parseProfile({ ...frontierProfile(0), batch }), gold: buildGoldIndex([...records]) });
  try {
    return await f({ dir, sim, input: writeJsonl(join(dir, 'input.jsonl'), records) });
  } finally {
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function sample(n: number): { records: TraceRecord[]; golds: ReturnType<typeof goldOf>[]; splits: string } | null {
  const dir = sharedDataDir();
  if (!dir) return null;
  const all = loadBenchmark('processbench', join(dir, 'processbench'));
  const records = sampleRecords(all.records, n, 0);
  const bySplit = new Map<string, number>();
  for (const r of records) bySplit.set(String(r.meta?.split), (bySplit.get(String(r.meta?.split)) ?? 0) + 1);
  return { records, golds: records.map((r) => goldOf(r, all.scope)), splits: [...bySplit].map(([s, k]) => `${s} ${k}`).join(', ') };
}

/** Part 1: five ways of paying for a verdict. */
async function costTable(n: number): Promise<string> {
  const s = sample(n);
  if (!s) return `skipped: ${MISSING_DATA_MESSAGE}`;
  return withSim(s.records, { completion_delay_ms: 50 }, async (ctx) => {
    const runs = [
      await judge(ctx, 'single judge, online', { mode: 'single' }, { batch: false, expect: n }),
      await judge(ctx, 'consolidation, online', { mode: 'consolidation' }, { batch: false, expect: n }),
      await judge(ctx, 'cascade `empty` + union, online', CHEAP_CASCADE, { batch: false, expect: n }),
      await judge(ctx, 'cascade `empty` + consolidation, online', RULES['consolidation, 1+1, empty']!, { batch: false, expect: n }),
      await judge(ctx, 'consolidation, batch', { mode: 'consolidation' }, { batch: true, expect: n }),
      await judge(ctx, 'cascade `empty` + union, batch', CHEAP_CASCADE, { batch: true, expect: n }),
      await judge(ctx, 'cascade `empty` + consolidation, batch', RULES['consolidation, 1+1, empty']!, { batch: true, expect: n }),
    ];
    const scores = await score(s.golds, runs);
    const single = runs[0]!;
    const lines = [
      `${n} ProcessBench records (seeded sample, seed 0, as \`eval -b processbench -n ${n}\`: ${s.splits}); jurors sim-juror-a/-b/-c and sim-consolidator of the cascade frontier's profile (misses independent); the CLI against the simulator's server over loopback, batch runs through its Batch API (\`quiet_ms\` 300, \`poll_interval_ms\` 100, completion after 50 ms). Prices: ${PRICE_SOURCE}. Step Balanced F1: minor+, first-error labels; ProcessBench F1: mean over splits of the harmonic mean of accuracy on erroneous and on correct samples; 95 % paired bootstrap intervals (2,000 resamples).`,
      '',
      '| system | $ / record | $ / 1,000 records | × single online | tokens × single | online chat calls | batches | step Balanced F1 (95 % CI) | ProcessBench F1 (95 % CI) |',
      '|---|---|---|---|---|---|---|---|---|',
    ];
    runs.forEach((r, i) => {
      const sc = scores[i]!;
      lines.push(`| ${r.name} | ${r.usd.toFixed(6)} | ${fmt(r.usd * 1000, 3)} | ${fmt(r.usd / single.usd, 2)} | ${fmt(r.tokens / single.tokens, 2)} | ${r.online_calls} | ${r.batches} | ${ci(sc.step.balanced_f1)} | ${ci(sc.protocol.metrics.average_f1!)} |`);
    });
    const same = scores.every((sc, i) => i < 4 || sc.step.balanced_f1.value === scores[i === 4 ? 1 : i === 5 ? 2 : 3]!.step.balanced_f1.value);
    lines.push('', `Batch runs' step metrics equal to their online runs': ${same ? 'yes' : 'NO'}.`);
    return lines.join('\n');
  });
}

/** Part 2: cascade rules against full consolidation, online. */
async function rulesTable(n: number): Promise<string> {
  const s = sample(n);
  if (!s) return `skipped: ${MISSING_DATA_MESSAGE}`;
  return withSim(s.records, { completion_delay_ms: 50 }, async (ctx) => {
    const runs = [await judge(ctx, 'single', { mode: 'single' }, { batch: false, expect: n }), await judge(ctx, 'consolidation (all seats)', { mode: 'consolidation' }, { batch: false, expect: n })];
    for (const [name, over] of Object.entries(RULES)) runs.push(await judge(ctx, name, over, { batch: false, expect: n }));
    const scores = await score(s.golds, runs);
    const single = runs[0]!;
    const full = scores[1]!;
    const d = (a: number | null, b: number | null) => (a === null || b === null ? '–' : `${a >= b ? '+' : ''}${fmt((a - b) * 100, 1)}`);
    const lines = [
      `${n} ProcessBench records (seed 0: ${s.splits}); the same jurors and prices; all online (a batch run halves each $ figure and changes no verdict).`,
      '',
      '| rule | tokens × single | $ / record (online) | $ / record (batch) | step Balanced F1 | Δ vs consolidation | ProcessBench F1 | Δ vs consolidation | neither more than 1 point below |',
      '|---|---|---|---|---|---|---|---|---|',
    ];
    runs.forEach((r, i) => {
      const sc = scores[i]!;
      const db = d(sc.step.balanced_f1.value, full.step.balanced_f1.value);
      const dp = d(sc.protocol.metrics.average_f1!.value, full.protocol.metrics.average_f1!.value);
      const within = i >= 2 && sc.step.balanced_f1.value! - full.step.balanced_f1.value! >= -0.01 && sc.protocol.metrics.average_f1!.value! - full.protocol.metrics.average_f1!.value! >= -0.01;
      lines.push(`| ${r.name} | ${fmt(r.tokens / single.tokens, 2)} | ${r.usd.toFixed(6)} | ${(r.usd / 2).toFixed(6)} | ${pct(sc.step.balanced_f1.value)} | ${i === 1 ? '0.0' : db} | ${pct(sc.protocol.metrics.average_f1!.value)} | ${i === 1 ? '0.0' : dp} | ${i < 2 ? '' : within ? 'yes' : 'no'} |`);
    });
    return lines.join('\n');
  });
}

/**
 * `n` records with distinct prompts: the ProcessBench records in turn, the k-th repetition's
 * problem ending in "(variant k)". Repeating records unchanged would not do: identical calls in
 * flight share one batch line, so copies would not wait as separate requests.
 */
function distinctRecords(all: readonly TraceRecord[], n: number): TraceRecord[] {
  const out: TraceRecord[] = [];
  for (let i = 0; i < n; i++) {
    const r = all[i % all.length]!;
    const k = Math.floor(i / all.length);
    out.push(k === 0 ? r : { ...r, id: `${r.id}#${k}`, problem: `${r.problem}\n\n(variant ${k})` });
  }
  return out;
}

/** Part 3: peak RSS of `run --batch` with every record of the input waiting in Phase 1 batches at once. */
async function rssTable(sizes: readonly number[], heapMb: number | undefined): Promise<string> {
  const lines = [
    'Peak RSS of the `run --batch` process (`/usr/bin/time -f %M`; the run worker is a thread of it), consolidation, `--concurrency` = the record count, so every record waits in the Phase 1 batches at once; `quiet_ms` 10 s (a collector is cut once no request has joined it for 10 s, so a pause in reading does not split Phase 1), the simulator (in the benchmark process) completes each batch 5 s after accepting it. The 3,400 ProcessBench records in turn, the problem of each repetition tagged “(variant k)” so that no two calls are identical (identical calls in flight share one batch line).',
    '',
    `| records | \`--concurrency\`${heapMb !== undefined ? `, \`--max-heap-mb ${heapMb}\`` : ''} | Phase 1 requests waiting at once (peak) | batches | peak RSS (MB) | wall s |`,
    '|---|---|---|---|---|---|',
  ];
  const dir = sharedDataDir();
  if (!dir) return `skipped: ${MISSING_DATA_MESSAGE}`;
  const all = loadBenchmark('processbench', join(dir, 'processbench')).records;
  for (const n of sizes) {
    const records = distinctRecords(all, n);
    const row = await withSim(records, { completion_delay_ms: 5000 }, (ctx) =>
      judge(ctx, `rss-${n}`, { mode: 'consolidation' }, { batch: true, expect: n, concurrency: n, rss: true, maxHeapMb: heapMb, batchKeys: { quiet_ms: 10_000, poll_interval_ms: 1000 } }),
    );
    lines.push(`| ${n.toLocaleString('en-US')} | ${n.toLocaleString('en-US')} | ${row.peak_waiting_requests.toLocaleString('en-US')} | ${row.batches} | ${fmt(row.peak_rss_mb!, 1)} | ${fmt(row.seconds, 1)} |`);
    process.stderr.write(`batch-cost rss ${n}: ${row.peak_rss_mb} MB, ${row.peak_waiting_requests} waiting, ${row.seconds.toFixed(1)} s\n`);
  }
  return lines.join('\n');
}

export async function benchBatchCost(): Promise<string> {
  const n = Number(process.env.BATCH_COST_N ?? 600);
  const parts = (process.env.BATCH_COST_PARTS ?? 'cost,rules').split(',');
  const sizes = (process.env.BATCH_COST_RSS ?? '5000,10000,20000').split(',').map(Number);
  if (!Number.isInteger(n) || n < 1 || sizes.some((x) => !Number.isInteger(x) || x < 1)) throw new Error('BATCH_COST_N and BATCH_COST_RSS must be whole numbers >= 1');
  const out: string[] = [];
  if (parts.includes('cost')) out.push('#### Dollars per record', '', await costTable(n));
  if (parts.includes('rules')) out.push('', '#### Cascade rules', '', await rulesTable(n));
  if (parts.includes('rss')) out.push('', '#### Peak RSS with records waiting in batches', '', await rssTable(sizes, process.env.BATCH_COST_HEAP_MB ? Number(process.env.BATCH_COST_HEAP_MB) : undefined));
  return out.join('\n');
}
