import type { Command } from 'commander';
import { join } from 'node:path';
import { defaultProfile, profileFromAuditLog, type ReplyProfile } from '../compose/estimate-profile.js';
import { projectModes, seatShares, type ModeProjection } from '../compose/estimate.js';
import { activeJurors } from '../jury/seats.js';
import { sampleInput } from '../compose/estimate-sample.js';
import { unpricedModels } from '../llm/ledger.js';
import { loadPromptSet } from '../prompts/templates.js';
import { packageRoot } from '../util/paths.js';
import { UsageError, writeJson } from './io.js';
import { juryOption, loadJuryConfig } from './jury-setup.js';

export interface EstimateOptions {
  config?: string;
  input?: string;
  sample: string;
  seed: string;
  calibrate?: string;
  json?: boolean;
}

export interface Estimate {
  input: string;
  records: number;
  dead_letters: number;
  sampled: number;
  configured_mode: string;
  profile: ReplyProfile;
  unpriced_models: string[];
  modes: ModeProjection[];
  /** with `phase1.strategy: cascade`: the share of records each model juror is projected to judge, and where it comes from */
  cascade?: { seat_shares: Record<string, number>; from: string };
}

const int = (v: string, flag: string, min: number): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`${flag} must be a whole number of at least ${min} (got "${v}")`);
  return n;
};

export async function estimate(opts: EstimateOptions): Promise<Estimate> {
  const config = loadJuryConfig(opts);
  const input = opts.input ?? join(packageRoot(), 'examples', 'traces');
  const sampled = await sampleInput(input, config, int(opts.sample, '--sample', 1), int(opts.seed, '--seed', 0)).catch((err: Error) => {
    throw new UsageError(`--input: ${err.message}`);
  });
  const d = config.deliberation ?? { max_turns: 12, recent_window: 8 };
  const base = defaultProfile(config.jurors.length, d.max_turns, d.recent_window);
  const profile = opts.calibrate ? profileFromAuditLog(opts.calibrate, base) : base;
  const modes = projectModes(config, loadPromptSet(config.prompts_dir), sampled.sample, sampled.judged, profile);
  const shares = seatShares(config, profile);
  const cascade = config.phase1?.strategy === 'cascade'
    ? { seat_shares: Object.fromEntries(activeJurors(config).map((j, i) => [j.id, shares[i]!])), from: profile.phase1_calls === undefined ? 'no pilot: every seat on every record, an upper bound' : `the Phase 1 calls per record of ${profile.from}` }
    : undefined;
  return { input, records: sampled.judged, dead_letters: sampled.dead, sampled: sampled.sample.length, configured_mode: config.mode, profile, unpriced_models: unpricedModels(config), modes, ...(cascade ? { cascade } : {}) };
}

function text(e: Estimate): string {
  const usd = (x: number | null, none = 'unknown') => (x === null ? none : x.toFixed(4));
  const rows = [['mode', 'calls', 'tokens in', 'tokens out', 'USD', 'USD batch'], ...e.modes.map((m) => [m.mode + (m.mode === e.configured_mode ? ' *' : ''), m.calls, m.tokens_in, m.tokens_out, usd(m.cost_usd), usd(m.batch_cost_usd, m.mode === 'deliberation' ? 'n/a' : 'unknown')].map(String))];
  const w = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const table = rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join('  '));
  return [
    `input: ${e.input}: ${e.records} records to judge (${e.dead_letters} would be dead letters); prompts built for ${e.sampled} sampled records`,
    `replies and deliberation turns: ${e.profile.from}`,
    ...table,
    '* the configured mode. Token counts are estimates (characters / 4, plus 4 per message); no model was called.',
    'USD batch: the same calls with run --batch, at the models\' batch rates (prices.<model>.batch_*, else half the online price; docs/batch.md).',
    ...(e.cascade ? [`cascade Phase 1: share of records each juror judges: ${Object.entries(e.cascade.seat_shares).map(([id, x]) => `${id} ${x.toFixed(2)}`).join(', ')} (${e.cascade.from})`] : []),
    ...(e.unpriced_models.length ? [`models without a price (USD unknown where they are called): ${e.unpriced_models.join(', ')}`] : []),
  ].join('\n');
}

export function registerEstimate(program: Command): void {
  program
    .command('estimate')
    .description('dry run: project calls, tokens and dollars of judging an input in every mode the config can run, without calling a model')
    .addOption(juryOption('config'))
    .option('-i, --input <path>', 'what `run` would read: JSONL, Parquet, a folder of them, or s3://bucket/prefix (default: the bundled examples)')
    .option('--sample <n>', 'records whose prompts are built and counted; the rest of the input is only counted', '200')
    .option('--seed <n>', 'seed of the sample (the same seed picks the same records)', '1')
    .option('--calibrate <audit-log>', 'reply sizes and deliberation turns measured from the audit log (--audit-log) of an earlier run on other records, instead of the defaults')
    .option('--json', 'print the estimate as JSON')
    .addHelpText(
      'after',
      `
The whole input is read once to count the records that would be judged; --sample of them are
picked at random and their Phase 1 and consolidation prompts are built by the code that builds
them for real calls. Prompt tokens are the model layer's estimate (characters / 4, plus 4 per
message), so they can differ from a model's own tokenizer by 10-20 % for text dense in digits,
code or non-English scripts. What a dry run cannot know, how long replies are and how many turns a
deliberation takes, comes from documented defaults or, with --calibrate, from the audit log of a
pilot run (e.g. \`run -i pilot.jsonl --audit-log pilot-audit.jsonl\`). Taxonomy calls, retries and
re-asks are not included. Dollars use the config's \`prices\`. With \`phase1.strategy: cascade\`, seats
past the start ones are projected on every record (an upper bound) unless --calibrate gives a
pilot of the same cascade, whose Phase 1 calls per record set their share. See README,
"Estimates and budgets".

Examples:
  reasoning-jury estimate -c jury.yaml -i traces/ --sample 500
  reasoning-jury estimate -c jury.yaml -i traces/ --calibrate pilot-audit.jsonl --json`,
    )
    .action(async (opts: EstimateOptions) => {
      const e = await estimate(opts);
      if (opts.json) writeJson(e, true);
      else process.stdout.write(`${text(e)}\n`);
    });
}
