import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { basename } from 'node:path';
import { openOutput, type OutputTarget } from '../compose/io.js';
import { parseReviewFile, recordReviews, ReviewInputError, type ReviewInput } from '../compose/review.js';
import type { ReviewOrigin } from '../pipeline/commit/reviews.js';
import { UsageError } from './io.js';
import { addLeaseOptions, withOutputLease, type LeaseFlags } from './lease-options.js';

/** Who reviews when nobody says: the login name (a container may have none). */
export function defaultReviewer(): string {
  try {
    return process.env.USER || userInfo().username || 'reviewer';
  } catch {
    return 'reviewer';
  }
}

export async function openReviewedOutput(out: string): Promise<OutputTarget> {
  return openOutput(out, {}).catch((err: Error) => {
    throw new UsageError(`${out}: ${err.message}`);
  });
}

/** Commits reviews into `out` under its lease; a bad review is a usage error (exit 2), nothing written. */
export async function commitReviewsCli(out: OutputTarget, inputs: ReviewInput[], o: { origin: ReviewOrigin; reviewer: string; flags: LeaseFlags; where?: (i: number) => string }): Promise<number> {
  const rows = await recordReviews(out.store, inputs, {
    origin: o.origin,
    reviewer: o.reviewer,
    withLease: (work) => withOutputLease(out, 'review', o.flags, (lease) => work(() => lease.confirmHeld())),
    ...(o.where ? { where: o.where } : {}),
  }).catch((err: unknown) => {
    throw err instanceof ReviewInputError ? new UsageError(err.message) : err;
  });
  return rows.length;
}

interface ReviewFlags extends LeaseFlags {
  record?: string;
  decision?: string;
  note?: string;
  reviewer?: string;
}

export function registerReview(program: Command): void {
  const cmd = program
    .command('review')
    .description('record a human decision (keep | drop) for a judged record; `decide` then takes it over the policy\'s')
    .argument('<out>', 'the judged output (folder or s3://bucket/prefix)')
    .option('--record <id>', 'the record\'s id (record_id in the tables); required')
    .option('--decision <d>', 'keep | drop; required')
    .option('--note <text>', 'why (kept with the review)')
    .option('--reviewer <name>', 'who reviews (default: the login name)');
  addLeaseOptions(cmd)
    .addHelpText(
      'after',
      `
The review is appended to OUT/reviews/ (a committed table: reviewer, reviewed_at, record_id,
decision, note). The latest review of a record counts. \`decide --shards OUT\` writes the reviewed
decision, with reason review:<reviewer>, into its decisions table and corpus. Reviews made
elsewhere: \`review import OUT FILE\`. While another command writes OUT, review stops with exit
code 4 (or waits: --wait-for-lease).

Example:
  reasoning-jury review out/ --record r-17 --decision drop --note "wrong carry in step 3"`,
    )
    .action(async (outArg: string, opts: ReviewFlags) => {
      // Plain options, not required ones: commander would ask `review import` for them too.
      if (opts.record === undefined || opts.decision === undefined) throw new UsageError('review needs --record <id> and --decision keep|drop (or: review import OUT FILE)');
      const out = await openReviewedOutput(outArg);
      await commitReviewsCli(out, [{ record_id: opts.record, decision: opts.decision, note: opts.note ?? null, reviewer: opts.reviewer }], {
        origin: 'cli',
        reviewer: opts.reviewer ?? defaultReviewer(),
        flags: opts,
        where: () => '--record/--decision',
      });
      process.stdout.write(`review of ${opts.record} recorded: ${opts.decision!.trim().toLowerCase()}  (${out.location}/reviews/)\n`);
    });
  registerImport(cmd);
}

function registerImport(review: Command): void {
  const cmd = review
    .command('import')
    .description('record many reviews at once from a JSON Lines or CSV file (record_id, decision, note[, reviewer])')
    .argument('<out>', 'the judged output (folder or s3://bucket/prefix)')
    .argument('<file>', 'JSONL: {"record_id": …, "decision": "keep"|"drop", "note": …}; CSV: a header naming record_id (or id), decision, note, reviewer')
    .option('--reviewer <name>', 'reviewer of rows that name none (default: the login name)');
  addLeaseOptions(cmd).action(async (outArg: string, file: string) => {
    // `review` has the same options, and commander hands them to it even after `import`.
    const opts = cmd.optsWithGlobals<LeaseFlags & { reviewer?: string }>();
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      throw new UsageError(`${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
    }
    const parsed = (() => {
      try {
        return parseReviewFile(text, basename(file));
      } catch (e) {
        throw e instanceof ReviewInputError ? new UsageError(e.message) : e;
      }
    })();
    const out = await openReviewedOutput(outArg);
    const n = await commitReviewsCli(out, parsed.rows, { origin: 'import', reviewer: opts.reviewer ?? defaultReviewer(), flags: opts, where: parsed.where });
    process.stdout.write(`${n} review(s) imported into ${out.location}/reviews/ (one commit)\n`);
  });
}
