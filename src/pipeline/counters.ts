import type { Envelope } from './envelope.js';
import type { RangeOutcome } from './source.js';

/** What the stage has done so far; the run summary and the progress line read it. */
export interface StageCounters {
  /** records pulled from the source (excluding those skipped as already committed) */
  read: number;
  skipped_committed: number;
  in_flight: number;
  judged: number;
  clean: number;
  degraded: number;
  no_verdict: number;
  dead_letters: number;
  /** ranges whose shards are in the output: written now, or found written (a restart, a racing writer) */
  ranges_committed: number;
  records_committed: number;
  /** ranges a streaming source told the stage not to write (partition moved, overlap); re-read */
  ranges_not_written: number;
  records_not_written: number;
  /** records pulled but dropped unwritten because their unit was revoked (re-read by its next owner) */
  dropped_revoked: number;
  tokens_in: number;
  tokens_out: number;
  cost_usd: number;
}

export function newCounters(): StageCounters {
  return { read: 0, skipped_committed: 0, in_flight: 0, judged: 0, clean: 0, degraded: 0, no_verdict: 0, dead_letters: 0, ranges_committed: 0, records_committed: 0, ranges_not_written: 0, records_not_written: 0, dropped_revoked: 0, tokens_in: 0, tokens_out: 0, cost_usd: 0 };
}

/** Counts a record that finished its steps. */
export function countRecord(c: StageCounters, env: Envelope): void {
  if (env.dead) {
    c.dead_letters += 1;
    return;
  }
  const v = env.verdict!;
  const row = env.rows!.verdict;
  c.judged += 1;
  if (v.error) c.no_verdict += 1;
  else if (v.degraded) c.degraded += 1;
  else c.clean += 1;
  c.tokens_in += row.tokens_in;
  c.tokens_out += row.tokens_out;
  c.cost_usd += row.cost_usd;
}

export function countRange(c: StageCounters, outcome: RangeOutcome, records: number): void {
  if (outcome === 'committed' || outcome === 'existing') {
    c.ranges_committed += 1;
    c.records_committed += records;
  } else {
    c.ranges_not_written += 1;
    c.records_not_written += records;
  }
}
