import type { Command } from 'commander';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Impact, IMPACTS } from '../../schemas/defect.js';
import type { ParticipantConfig } from '../../schemas/config.js';
import type { TraceRecord } from '../../schemas/trace.js';
import type { Verdict } from '../../schemas/verdict.js';
import { defaultDataPath, loadBenchmark } from '../eval/adapters/index.js';
import { MISSING_DATA_MESSAGE, sharedDataDir } from '../eval/data.js';
import { evaluate, type EvaluateInput, phase2Seat } from '../eval/harness.js';
import { renderMarkdown } from '../eval/report.js';
import { evalConfig, judgeRecords, prepareInputs, sampleRecords } from '../eval/run.js';
import { DEFAULT_SCORE_OPTIONS, type ScoreOptions } from '../eval/score.js';
import { BENCHMARKS, type BenchmarkName, FAILED_POLICIES, type FailedPolicy, type LoadedBenchmark, MISSING_POLICIES, type MissingPolicy } from '../eval/types.js';
import { readVerdictSource } from '../eval/verdicts-io.js';
import { evalRepairCommand } from './eval-repair.js';
import { UsageError } from './io.js';
import { juryOption, loadJuryConfig, openJury, type JuryOptions } from './jury-setup.js';
import { logger, logSettings } from '../util/log.js';

const log = logger('eval');

interface EvalOptions extends JuryOptions {
  benchmark?: string;
  data?: string;
  verdicts?: string;
  sample: string;
  seed: string;
  out: string;
  export?: string;
  threshold: string;
  propagate: boolean;
  failed: string;
  missing: string;
  resamples: string;
  ciSeed: string;
  knockout?: boolean;
  moderators?: string;
  costBaseline?: string;
  concurrency: string;
  companion: boolean;
}

const wholeNumber = (v: string, flag: string, min = 0): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`${flag} must be a whole number ≥ ${min} (got "${v}")`);
  return n;
};

function choice<T extends string>(v: string, allowed: readonly T[], flag: string): T {
  if (!(allowed as readonly string[]).includes(v)) throw new UsageError(`${flag} must be one of ${allowed.join(', ')} (got "${v}")`);
  return v as T;
}

function scoreOptions(o: EvalOptions): ScoreOptions {
  return {
    ...DEFAULT_SCORE_OPTIONS,
    threshold: choice<Impact>(o.threshold, IMPACTS, '--threshold'),
    propagate: o.propagate,
    failed: choice<FailedPolicy>(o.failed, FAILED_POLICIES, '--failed'),
    missing: choice<MissingPolicy>(o.missing, MISSING_POLICIES, '--missing'),
    resamples: wholeNumber(o.resamples, '--resamples', 1),
    seed: wholeNumber(o.ciSeed, '--ci-seed'),
  };
}

function dataPath(benchmark: BenchmarkName, given: string | undefined): string {
  if (given) return resolve(given);
  const shared = sharedDataDir();
  if (!shared) throw new UsageError(`--data is required: ${MISSING_DATA_MESSAGE}`);
  return defaultDataPath(benchmark, shared);
}

/** Seats for the sweep: the Phase 2 seat (consolidator, or moderator when deliberating) with each named model. */
function moderatorSeats(list: string | undefined, seat: ParticipantConfig | undefined): ParticipantConfig[] {
  if (!list) return [];
  if (!seat) throw new UsageError('--moderators needs a config with a consolidator or, for deliberation, a moderator (its endpoint serves the swept models)');
  return list
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean)
    .map((model) => ({ ...seat, model }));
}

function writeOutputs(out: string, report: Awaited<ReturnType<typeof evaluate>>['report'], verdicts: readonly Verdict[] | null): string {
  mkdirSync(out, { recursive: true });
  const md = renderMarkdown(report);
  writeFileSync(join(out, 'eval.json'), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(out, 'eval.md'), md);
  if (verdicts) writeFileSync(join(out, 'verdicts.jsonl'), verdicts.map((v) => JSON.stringify(v)).join('\n') + (verdicts.length ? '\n' : ''));
  return md;
}

const EVAL_HELP = `
Gold labels are joined to verdicts by record id: the adapters give every record a stable id
("processbench/gsm8k/gsm8k-0"), which --export writes into the JSONL a pipeline run reads, so
shards written by \`reasoning-jury run\` on that JSONL can be scored with --verdicts. With
--verdicts, give the run's -n/--seed to select its sample, so records it never judged count as
missing (scored wrong unless --missing exclude); without -n the selection is what the verdicts name.

Examples:
  reasoning-jury eval -b processbench -n 200                       # simulated jury, 200 records
  reasoning-jury eval -b processbench -c jury.yaml -n all --knockout
  reasoning-jury eval -b processbench -n 500 --export pb.jsonl && reasoning-jury run -c jury.yaml -i pb.jsonl -o out/
  reasoning-jury eval -b processbench --verdicts out/                 # score the shards
  reasoning-jury eval -b processbench -n 500 --verdicts out/          # the same, missing records of the sample counted`;

export function registerEval(program: Command): void {
  program
    .command('eval')
    .description("score the jury on a labelled benchmark: step metrics with bootstrap CIs, the benchmark's own protocol, the aggregation ladder and costs")
    // Not a commander requiredOption: commander would then ask it of `eval repair` too.
    .option('-b, --benchmark <name>', `one of ${BENCHMARKS.join(', ')} (required)`)
    .option('-d, --data <path>', 'benchmark file or folder in its own format (default: the shared data folder)')
    .option('--verdicts <path>', 'score stored verdicts instead of running the jury: a shard output folder or verdict JSONL')
    .option('-n, --sample <n>', 'records to judge, drawn by a seeded shuffle ("all" for every record)', '200')
    .option('--seed <n>', 'sampling seed', '0')
    .option('-o, --out <dir>', 'folder for eval.json, eval.md and verdicts.jsonl', 'eval-out')
    .option('--export <file>', 'write the (sampled) benchmark as trace-record JSONL for `reasoning-jury run`, then stop')
    .addOption(juryOption('config'))
    .option('--threshold <impact>', 'lowest severity that flags a step', 'minor')
    .option('--propagate', 'count every step after the first gold error as erroneous', false)
    .option('--failed <policy>', 'records whose verdict failed (no usable answer) in step metrics: wrong | flag_all | exclude', 'wrong')
    .option('--missing <policy>', 'selected records with no verdict at all (interrupted run, unreadable line, other step count): wrong | exclude', 'wrong')
    .option('--resamples <n>', 'bootstrap resamples (record level)', '10000')
    .option('--ci-seed <n>', 'bootstrap seed', '0')
    .option('--knockout', 'drop jurors one at a time (fewest unique gold catches first) and re-run Phase 2 only')
    .option('--moderators <models>', 'comma-separated models to sweep in the Phase 2 seat (consolidator or moderator), Phase 1 held fixed')
    .option('--cost-baseline <system>', 'system the cost ratios are relative to (default: the first solo juror)')
    .option('--concurrency <n>', 'records judged at once', '16')
    .option('--no-companion', 'PRMBench: leave out the clean companion set')
    .addOption(juryOption('auditLog'))
    .addOption(juryOption('cache'))
    .addHelpText('after', EVAL_HELP)
    .action(runEval)
    .addCommand(evalRepairCommand());
}

/** What every way of scoring shares: the loaded benchmark, its path, options and notes so far. */
type EvalBase = Pick<EvaluateInput, 'loaded' | 'dataPath' | 'score' | 'costBaseline'> & { notes: string[]; concurrency: number };

/** Loads the benchmark; a load failure or an empty benchmark is a usage error. */
function loadOrFail(benchmark: BenchmarkName, path: string, companion: boolean): LoadedBenchmark {
  let loaded;
  try {
    loaded = loadBenchmark(benchmark, path, { companion });
  } catch (e) {
    throw new UsageError(`cannot load ${benchmark} from ${path}: ${(e as Error).message}`);
  }
  if (loaded.records.length === 0) throw new UsageError(`no ${benchmark} records found at ${path}`);
  return loaded;
}

/** Names the first few items the adapter skipped on stderr; returns the note for the report. */
function skippedNotes(loaded: LoadedBenchmark): string[] {
  for (const s of loaded.skipped.slice(0, 3)) log.warn(`skipped ${s.source}: ${s.reason}`);
  if (loaded.skipped.length > 3) log.warn(`... ${loaded.skipped.length} items skipped in all (listed in eval.json)`);
  return loaded.skipped.length ? [`${loaded.skipped.length} benchmark items skipped by the adapter, e.g. ${loaded.skipped[0]!.source}: ${loaded.skipped[0]!.reason}`] : [];
}

async function runEval(this: Command, opts: EvalOptions): Promise<void> {
  // With --verdicts, -n/--seed given on the command line name the run's selection (so records
  // it never judged count as missing); without them the selection is what the verdicts name.
  const sampled = this.getOptionValueSource('sample') === 'cli';
  if (opts.benchmark === undefined) throw new UsageError("required option '-b, --benchmark <name>' not specified");
  const benchmark = choice<BenchmarkName>(opts.benchmark, BENCHMARKS, '--benchmark');
  const score = scoreOptions(opts);
  const path = dataPath(benchmark, opts.data);
  const loaded = loadOrFail(benchmark, path, opts.companion);
  const notes = skippedNotes(loaded);
  const concurrency = wholeNumber(opts.concurrency, '--concurrency', 1);
  const out = resolve(opts.out);
  const base: EvalBase = { loaded, dataPath: path, score, notes, concurrency, ...(opts.costBaseline ? { costBaseline: opts.costBaseline } : {}) };

  const n = opts.sample === 'all' ? null : wholeNumber(opts.sample, '--sample', 1);
  if (opts.verdicts) return scoreStoredVerdicts(opts, opts.verdicts, base, out, sampled ? sampleRecords(loaded.records, n, opts.seed) : null);
  const selected = sampleRecords(loaded.records, n, opts.seed);
  if (opts.export) {
    writeFileSync(resolve(opts.export), selected.map((r) => JSON.stringify(r)).join('\n') + '\n');
    process.stdout.write(`wrote ${selected.length} ${benchmark} records to ${resolve(opts.export)}\n`);
    return;
  }
  await judgeAndScore(opts, base, selected, out);
}

/** --verdicts: score shards or verdict JSONL; with -c, the knockout and sweep re-run Phase 2 live. */
async function scoreStoredVerdicts(opts: EvalOptions, verdictsPath: string, base: EvalBase, out: string, sample: TraceRecord[] | null): Promise<void> {
  const { loaded, notes } = base;
  const src = await readVerdictSource(resolve(verdictsPath));
  const named = new Set(src.kind === 'shards' ? src.predictions.keys() : [...src.verdicts.map((v) => v.record_id), ...src.invalid.flatMap((i) => (i.record_id ? [i.record_id] : []))]);
  const selected = sample ?? loaded.records.filter((r) => named.has(r.id));
  if (!sample) notes.push('Selection: the records the verdicts name (give the run\'s -n/--seed to also count records it never judged).');
  if (src.kind === 'shards') {
    const { report } = await evaluate({ ...base, selected, predictions: src.predictions });
    process.stdout.write(`${writeOutputs(out, report, null)}\nwritten: ${join(out, 'eval.json')}, ${join(out, 'eval.md')}\n`);
    return;
  }
  if (src.invalid.length) notes.push(`${src.invalid.length} lines of ${verdictsPath} are not verdicts (first: ${src.invalid[0]!.where}: ${src.invalid[0]!.reason})`);
  // Re-running Phase 2 on stored Phase 1 judgements needs the jury that should run it.
  const phase2 = (opts.knockout === true || Boolean(opts.moderators)) && Boolean(opts.config);
  if (opts.moderators && !opts.config) notes.push('--moderators needs -c: the sweep re-runs Phase 2 with a live jury.');
  const config = phase2 ? evalConfig(loadJuryConfig(opts)) : null;
  const runtime = config ? await openJury(config, opts, { records: loaded.records }) : undefined;
  try {
    const judged = new Set(src.verdicts.map((v) => v.record_id));
    const input: EvaluateInput = {
      ...base,
      selected,
      verdicts: src.verdicts,
      unreadable: src.invalid.flatMap((i) => (i.record_id ? [i.record_id] : [])),
      knockout: opts.knockout === true,
      ...(runtime && config
        ? { runtime, inputs: prepareInputs(config, loaded.records.filter((r) => judged.has(r.id))), moderators: moderatorSeats(opts.moderators, phase2Seat(config)), prices: config.prices }
        : {}),
    };
    const { report } = await evaluate(input);
    process.stdout.write(`${writeOutputs(out, report, null)}\nwritten: ${join(out, 'eval.json')}, ${join(out, 'eval.md')}\n`);
  } finally {
    await runtime?.close();
  }
}

/** A progress line on stderr at most every 5 s, and at the last record (a JSON event with --log-format json). */
function progressLine(total: number): () => void {
  let done = 0;
  let last = Date.now();
  const json = logSettings().format === 'json';
  return () => {
    done++;
    if (Date.now() - last > 5000 || done === total) {
      last = Date.now();
      if (json) logger('progress').info('progress', { done, total });
      else process.stderr.write(`[eval] judged ${done}/${total}\n`);
    }
  };
}

/** The default: judge the sample with the configured jury, then score it. */
async function judgeAndScore(opts: EvalOptions, base: EvalBase, selected: TraceRecord[], out: string): Promise<void> {
  const config = evalConfig(loadJuryConfig(opts));
  const moderators = moderatorSeats(opts.moderators, phase2Seat(config)); // checked before any call
  const runtime = await openJury(config, opts, { records: selected });
  try {
    const judged = await judgeRecords(runtime, selected, { concurrency: base.concurrency, onDone: progressLine(selected.length) });
    const { report } = await evaluate({
      ...base,
      selected,
      verdicts: judged.verdicts,
      runtime,
      inputs: judged.inputs,
      unprepared: judged.unprepared.length,
      knockout: opts.knockout === true,
      moderators,
      prices: config.prices,
    });
    process.stdout.write(writeOutputs(out, report, judged.verdicts));
    process.stdout.write(`\nwritten: ${join(out, 'eval.json')}, ${join(out, 'eval.md')}, ${join(out, 'verdicts.jsonl')}\n`);
  } finally {
    await runtime.close();
  }
}
