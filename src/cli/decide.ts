import type { Command } from 'commander';
import { resolve } from 'node:path';
import type { ShardFormat } from '../../schemas/outputs.js';
import { isS3Url, openOutput } from '../compose/io.js';
import { RedecideError, redecide } from '../compose/redecide.js';
import { DEFAULT_CHECKPOINT_INTERVAL, openTableLog, reconcileTables, type TableFormat } from '../compose/table-log.js';
import { CardWriter } from '../compose/card-writer.js';
import { parquetTables, policyFacts } from '../compose/card-facts.js';
import { loadPolicyFile } from '../config/load.js';
import { latestReviews, readReviews } from '../pipeline/commit/reviews.js';
import { logger } from '../util/log.js';
import { UsageError } from './io.js';
import { addLeaseOptions, withOutputLease, type LeaseFlags } from './lease-options.js';

interface DecideOptions extends LeaseFlags {
  policy: string;
  shards: string;
  out: string;
  format: string;
  tableFormat: string;
}

const location = (url: string): string => (isS3Url(url) ? url.replace(/\/+$/, '') : resolve(url));

export function registerDecide(program: Command): void {
  const cmd = program
    .command('decide')
    .description('apply another filter policy to committed verdicts (no model call) and write a new decisions table and corpus')
    .requiredOption('--policy <file>', 'YAML/JSON filter policy (`rules`, `default`), or a jury config whose `filter` section is used')
    .requiredOption('--shards <dir>', 'output of a `run` (folder or s3://bucket/prefix): its committed ranges are read, nothing else')
    .requiredOption('-o, --out <dir>', 'new output (folder or s3://bucket/prefix) for the decisions table, the corpus and their commit manifests')
    .option('--format <format>', 'parquet | arrow | both', 'parquet')
    .option('--table-format <format>', 'delta: the new output\'s Parquet tables are also Delta Lake tables, one Delta commit per range (docs/tables.md) | none', 'none');
  addLeaseOptions(cmd)
    .addHelpText(
      'after',
      `
Reads the verdicts, defects and steps of every range listed in --shards/_commits/ and decides
each record again with --policy, the same way a run with that policy would have. When --shards
has a curated corpus, its committed parts (every judged record as read) are written again with
the new decisions, in the corpus format --shards used. Each range (decisions and corpus) is
committed to --out under the same name (parts first, manifest last); running the same command
again after a crash skips the ranges already there, so every record is decided exactly once.
An --out that holds ranges decided with another policy is refused. Human reviews of --shards
(its reviews/ table: \`view\`, \`review\`, \`review import\`) override the policy: a reviewed
record gets the reviewer's keep or drop, with reason review:<reviewer>; an --out decided under
other reviews is refused too. No model is called. While
another command writes --out, decide stops with exit code 4 (or waits: --wait-for-lease).

Example:
  reasoning-jury decide --policy strict.yaml --shards out/ --out out-strict/`,
    )
    .action(async (opts: DecideOptions) => {
      if (!['parquet', 'arrow', 'both'].includes(opts.format)) throw new UsageError(`--format must be parquet, arrow or both (got "${opts.format}")`);
      const formats: ShardFormat[] = opts.format === 'both' ? ['parquet', 'arrow'] : [opts.format as ShardFormat];
      if (location(opts.shards) === location(opts.out)) throw new UsageError(`--out must differ from --shards (${location(opts.out)}): decisions go to a new output`);
      const policy = loadPolicyFile(opts.policy);
      const from = await openOutput(opts.shards, {}).catch((err: Error) => {
        throw new UsageError(`--shards ${opts.shards}: ${err.message}`);
      });
      const to = await openOutput(opts.out, {}).catch((err: Error) => {
        throw new UsageError(`--out ${opts.out}: ${err.message}`);
      });
      const reviews = latestReviews(await readReviews(from.store));
      const log = logger('decide');
      const t0 = Date.now();
      if (!['none', 'delta'].includes(opts.tableFormat)) throw new UsageError(`--table-format must be delta or none (got "${opts.tableFormat}")`);
      const tableLog = await openTableLog(to.store, opts.tableFormat as TableFormat, DEFAULT_CHECKPOINT_INTERVAL);
      // The new output's dataset card: its decisions (and corpus, found in the manifests), the policy.
      const card = new CardWriter({ store: to.store, location: to.location, tables: parquetTables(formats, []).filter((t) => t === 'decisions'), corpus: false, facts: { command: 'decide', decidedFrom: from.location, policy: policyFacts(policy) } });
      const res = await withOutputLease(to, 'decide', opts, async (lease) => {
        await reconcileTables(tableLog, to.store, true);
        const done = await redecide({
          from: from.store, fromLocation: from.location, to: to.store, toLocation: to.location, policy, formats, reviews,
          onRange: (e) => log.debug(`range ${e.first}-${e.last}: ${e.records} record(s)${e.existing ? ' (already decided)' : ''}`, { first: e.first, last: e.last }),
          beforeManifest: () => lease.confirmHeld(),
          afterCommit: card.committed,
          ...(tableLog ? { tableLog } : {}),
        }).finally(() => card.flush());
        card.update(); // a resumed decide that commits nothing new writes it too
        await card.flush();
        return done;
      }).catch((err: unknown) => {
        throw err instanceof RedecideError ? new UsageError(err.message) : err;
      });
      const d = res.decisions;
      process.stdout.write(
        [
          `ranges decided       ${res.ranges - res.existing} (already in --out, skipped: ${res.existing})`,
          `records              ${res.records}`,
          `  keep / drop / review (ranges decided now)  ${d.keep} / ${d.drop} / ${d.review}`,
          `  set by a human review (reviews/ of --shards)  ${res.reviewed}`,
          `seconds              ${((Date.now() - t0) / 1000).toFixed(1)}`,
          `decisions: ${to.location}/decisions/${res.corpus ? `  corpus: ${to.location}/${res.corpus === 'jsonl' ? 'jsonl/' : ''}corpus/` : ''}  commits: ${to.location}/_commits/`,
        ].join('\n') + '\n',
      );
    });
}
