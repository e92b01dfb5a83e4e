/**
 * What the stage has done so far, counted into one object that metrics read live. Each part of
 * the stage counts its own fields: the intake chain what it skipped, dropped or retracted, the
 * judge pool what is in flight, the commit queue how records and ranges ended.
 */
import type { Finished } from './envelope.js';
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
  /** later copies of a record id dropped unjudged (input.duplicate_ids: keep_first; listed in their manifests) */
  duplicates_dropped: number;
  /** committed ranges retracted because their input changed (input.on_changed_input: rejudge) */
  ranges_retracted: number;
  /** tokens and cost of the judged records' verdicts and repairs rows (retries, re-judging) */
  tokens_in: number;
  tokens_out: number;
  /** priced calls only: see unpriced_records */
  cost_usd: number;
  /** judged records whose cost is unknown (some call used a model without a price) */
  unpriced_records: number;
  /** output-store outages waited out (intake held meanwhile), and their total length */
  storage_outages: number;
  storage_outage_ms: number;
  /** times intake paused because an endpoint was down, their total time (the current one included), and whether it is paused now */
  pauses: number;
  paused_ms: number;
  paused: boolean;
}

export function newCounters(): StageCounters {
  return { read: 0, skipped_committed: 0, in_flight: 0, judged: 0, clean: 0, degraded: 0, no_verdict: 0, dead_letters: 0, ranges_committed: 0, records_committed: 0, ranges_not_written: 0, records_not_written: 0, dropped_revoked: 0, duplicates_dropped: 0, ranges_retracted: 0, tokens_in: 0, tokens_out: 0, cost_usd: 0, unpriced_records: 0, storage_outages: 0, storage_outage_ms: 0, pauses: 0, paused_ms: 0, paused: false };
}

/** Counts a record that finished its steps. */
export function countRecord(c: StageCounters, env: Finished): void {
  if (env.dead) {
    c.dead_letters += 1;
    return;
  }
  const v = env.verdict;
  const row = env.rows.verdict;
  c.judged += 1;
  if (v.error) c.no_verdict += 1;
  else if (v.degraded) c.degraded += 1;
  else c.clean += 1;
  // The record's spend: its verdict and its repairs rows (retries and their re-judging).
  const repairs = env.rows.repairs ?? [];
  c.tokens_in += row.tokens_in + repairs.reduce((a, r) => a + r.tokens_in, 0);
  c.tokens_out += row.tokens_out + repairs.reduce((a, r) => a + r.tokens_out, 0);
  c.cost_usd += (row.cost_usd ?? 0) + repairs.reduce((a, r) => a + (r.cost_usd ?? 0), 0);
  if (row.cost_usd === null || repairs.some((r) => r.cost_usd === null)) c.unpriced_records += 1;
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
