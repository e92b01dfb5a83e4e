import { Command } from 'commander';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { REPAIR_CONDITIONS, type RepairCondition, type RepairRow } from '../../schemas/repair.js';
import { isS3Url, openOutput } from '../compose/io.js';
import type { OriginalRecord } from '../eval/repair/accuracy.js';
import { analyzeRepairs, DEFAULT_REPAIR_ANALYSIS, type OriginalsSource, type RepairAnalysisOptions } from '../eval/repair/analyze.js';
import { corpusOriginals } from '../eval/repair/originals.js';
import { defaultConfig, loadConfigFile } from '../config/load.js';
import { ATTEMPT_POLICIES, type AttemptPolicy } from '../eval/repair/outcomes.js';
import { committedRepairRows, committedSeverities, readOriginals, repairRowsFromFile } from '../eval/repair/read.js';
import { subgateRows } from '../eval/repair/subgate.js';
import { IMPACTS, type Impact } from '../../schemas/defect.js';
import { renderRepairMarkdown } from '../eval/repair/render.js';
import { UsageError } from './io.js';

interface EvalRepairOptions {
  /** `eval`'s own -c (commander gives it to the parent): the config the output was judged with */
  config?: string;
  originals?: string;
  subgate?: string;
  judged?: string;
  attempts: string;
  compare: string;
  bootResamples: string;
  bootSeed: string;
  level: string;
  format: string;
}

// Option names differ from `eval`'s own (--seed, --resamples, ...): commander lets the parent
// command take its options wherever they stand on the line.
const HELP = `
<out> is the output of a repair (folder or s3://bucket/prefix): the rows of its committed
\`repairs\` table are read through the manifests in <out>/_commits/, nothing else. A single
.parquet or .arrow file of repairs rows is read as it is.

Transitions count retried records with a reference answer whose retry ran (a retry that failed
for good is listed as failed and keeps the original answer). Corpus accuracy needs the original
correctness of every corpus record, retried or not (the repairs table only holds retried ones).
Without --originals it is derived from the committed corpus of the judged output (--judged,
default <out>): each record mapped again with input.mapping of -c (the config the output was
judged with; default: the embedded one) and its answer extracted and compared with its
reference under repair.answer exactly as the repair step does. --originals, a JSONL file with
one {"record_id", "problem_id"?, "correct"} line per corpus record, overrides that. The report
says where the originals came from and how many had no reference. The paired comparison (a − b) uses the records
retried under both conditions: exact McNemar on the discordant records, and a percentile
bootstrap that resamples problem_ids with all their records. --subgate evaluates a stricter
gate on the retries of the rows' gate (the fatal-only gate of Table 14 reuses the any-defect
retries) by the highest severity of each record's committed verdict. docs/repair-analysis.md has
the definitions.

Examples:
  reasoning-jury eval repair out/ -c jury.yaml                      # Markdown on stdout; originals from out/'s corpus
  reasoning-jury eval repair repaired/ -c jury.yaml --judged out/   # repairs of \`repair run\`, corpus of the judged output
  reasoning-jury eval repair out/ --originals originals.jsonl --format json > repair.json
  reasoning-jury eval repair out/ --attempts any --compare full,steps --boot-resamples 2000
  reasoning-jury eval repair out/ --originals originals.jsonl --subgate fatal   # Table 14's fatal-only gate`;

function wholeNumber(v: string, flag: string, min: number): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`${flag} must be a whole number ≥ ${min} (got "${v}")`);
  return n;
}

function analysisOptions(o: EvalRepairOptions): RepairAnalysisOptions {
  if (!(ATTEMPT_POLICIES as readonly string[]).includes(o.attempts)) throw new UsageError(`--attempts must be one of ${ATTEMPT_POLICIES.join(', ')} (got "${o.attempts}")`);
  const pair = o.compare.split(',').map((s) => s.trim());
  if (pair.length !== 2 || pair[0] === pair[1] || !pair.every((c) => (REPAIR_CONDITIONS as readonly string[]).includes(c))) throw new UsageError(`--compare must name two different conditions of ${REPAIR_CONDITIONS.join(', ')}, e.g. full,steps (got "${o.compare}")`);
  const level = Number(o.level);
  if (!(level > 0 && level < 1)) throw new UsageError(`--level must be between 0 and 1 (got "${o.level}")`);
  return {
    attempts: o.attempts as AttemptPolicy,
    compare: pair as [RepairCondition, RepairCondition],
    resamples: wholeNumber(o.bootResamples, '--boot-resamples', 1),
    seed: wholeNumber(o.bootSeed, '--boot-seed', 0),
    level,
  };
}

interface Originals {
  records: OriginalRecord[] | null;
  source: OriginalsSource;
  missing?: string;
}

/** --originals when given, else derived from the committed corpus of the judged output. */
async function originalsOf(opts: EvalRepairOptions, judged: string): Promise<Originals> {
  if (opts.originals) {
    const path = resolve(opts.originals);
    return { records: readOriginals(path), source: { from: 'file', location: path } };
  }
  if (/\.(parquet|arrow)$/.test(judged) && !isS3Url(judged) && existsSync(judged) && statSync(judged).isFile()) {
    return { records: null, source: { from: 'corpus', location: judged }, missing: 'a single repairs file has no corpus (give --judged <out> or --originals)' };
  }
  const { store, location } = await openOutput(judged, {}).catch((err: Error) => {
    throw new UsageError(`--judged ${judged}: ${err.message}`);
  });
  const config = opts.config ? loadConfigFile(opts.config) : defaultConfig();
  const got = await corpusOriginals(store, config);
  if (got.parts === 0) return { records: null, source: { from: 'corpus', location }, missing: `${location} has no committed corpus (output.corpus off; give --originals)` };
  return { records: got.originals, source: { from: 'corpus', location } };
}

/** --subgate: the rows again under each stricter gate, by the severities of the judged output's verdicts. */
async function withSubgates(rows: RepairRow[], list: string, judged: string): Promise<RepairRow[]> {
  const impacts = list.split(',').map((s) => s.trim());
  for (const i of impacts) if (!(IMPACTS as readonly string[]).includes(i) || i === 'neutral') throw new UsageError(`--subgate takes minor, major or fatal (got "${i}")`);
  const { store, location } = await openOutput(judged, {}).catch((err: Error) => {
    throw new UsageError(`--judged ${judged}: ${err.message}`);
  });
  const severity = await committedSeverities(store);
  if (severity.size === 0) throw new UsageError(`--subgate needs the verdicts of the judged output: ${location} has no committed verdicts (give --judged)`);
  return [...rows, ...impacts.flatMap((i) => subgateRows(rows, severity, i as Impact))];
}

/** The repairs rows of <out>: a single table file, or the committed table of an output. */
async function readRows(out: string): Promise<RepairRow[]> {
  if (!isS3Url(out) && /\.(parquet|arrow)$/.test(out) && existsSync(out) && statSync(out).isFile()) return repairRowsFromFile(readFileSync(out), out);
  if (!isS3Url(out) && !existsSync(out)) throw new UsageError(`${out}: no such output folder or file`);
  const { store, location } = await openOutput(out, {}).catch((err: Error) => {
    throw new UsageError(`${out}: ${err.message}`);
  });
  const got = await committedRepairRows(store);
  if (got.files === 0) throw new UsageError(`${location} has no committed repairs table (no manifest in _commits/ lists one)`);
  return got.rows;
}

async function runEvalRepair(out: string, opts: EvalRepairOptions): Promise<void> {
  if (!['markdown', 'json'].includes(opts.format)) throw new UsageError(`--format must be markdown or json (got "${opts.format}")`);
  const options = analysisOptions(opts);
  // A RepairReadError (a file that is not a repairs table, a missing committed file) is an input error by its kind: exit 2.
  const where = isS3Url(out) ? out : resolve(out);
  let rows = await readRows(where);
  const judged = opts.judged ? (isS3Url(opts.judged) ? opts.judged : resolve(opts.judged)) : where;
  if (opts.subgate) rows = await withSubgates(rows, opts.subgate, judged);
  const originals = await originalsOf(opts, judged);
  const analysis = analyzeRepairs(rows, originals.records, options, originals.source, originals.missing);
  process.stdout.write(opts.format === 'json' ? `${JSON.stringify(analysis, null, 2)}\n` : renderRepairMarkdown(analysis));
}

/** `eval repair <out>`: added to the `eval` command by src/cli/eval.ts. */
export function evalRepairCommand(): Command {
  const d = DEFAULT_REPAIR_ANALYSIS;
  return new Command('repair')
    .description('analyse defect-guided repair (App. N): transitions per condition, corpus accuracy under each gate, paired comparison of two conditions')
    .argument('<out>', 'output holding a committed repairs table (folder or s3://), or one .parquet/.arrow file of repairs rows')
    .option('--originals <file>', 'JSONL of {record_id, problem_id?, correct} for every corpus record (default: derived from the judged output\'s corpus with -c\'s input.mapping and repair.answer)')
    .option('--subgate <impacts>', 'also evaluate stricter gates on the same retries: e.g. fatal adds gate <gate>/fatal, the records whose verdict has a fatal defect (comma-separated minor, major, fatal)')
    .option('--judged <out>', 'judged output whose committed corpus gives the originals and whose verdicts --subgate reads (default: <out>)')
    .option('--attempts <policy>', 'first: the lowest attempt of each record and condition; any: right when any attempt is right', d.attempts)
    .option('--compare <a,b>', 'conditions compared, a − b', 'full,steps')
    .option('--boot-resamples <n>', 'bootstrap resamples (problem level)', String(d.resamples))
    .option('--boot-seed <n>', 'bootstrap seed', String(d.seed))
    .option('--level <p>', 'coverage of every interval', String(d.level))
    .option('--format <format>', 'markdown | json', 'markdown')
    .addHelpText('after', HELP)
    .action((out: string, opts: EvalRepairOptions, cmd: Command) => runEvalRepair(out, { ...opts, config: (cmd.optsWithGlobals() as { config?: string }).config }));
}
