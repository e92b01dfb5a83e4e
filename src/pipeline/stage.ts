import PQueue from 'p-queue';
import type { Source, SourceDeadItem } from '../../connectors/source.js';
import type { JuryConfig } from '../../schemas/config.js';
import { type DeadLetterRow, truncateRaw } from '../../schemas/outputs.js';
import type { SourcePosition, TraceRecord } from '../../schemas/trace.js';
import { type DerivedRows, deriveRows } from '../derive/rows.js';
import { judgeRecord } from '../jury/judge.js';
import type { Runtime } from '../runtime.js';
import { prepareRecord } from './prepare.js';
import { mapSourceItem } from './record-mapping.js';
import { positionString, unitToken } from './positions.js';
import { type CommittedRanges, type PlannedRange, type RangeLimits, RangePlanner } from './range-planner.js';
import type { ShardCommitter, ShardRows } from './shard-commit.js';
import { Window } from './window.js';

/**
 * The stage: source items -> map + validate -> segment -> jury -> derive -> ranges -> commit.
 *
 * Up to `concurrency` records are judged at once and complete in any order. Each record holds a
 * window slot from the moment it is pulled until its range is committed, which bounds memory
 * and turns a slow jury or sink into slower reading. Every record pulled leaves as shard rows
 * or as a dead letter with its reason; nothing is dropped silently.
 */

export interface StageOptions {
  source: Source;
  runtime: Runtime;
  config: JuryConfig;
  committer: ShardCommitter;
  /** ranges already committed (from manifests): skipped, not re-judged */
  committed?: CommittedRanges;
  concurrency: number;
  range: RangeLimits;
  /** records held between pull and commit; default 2 * range.maxRecords + concurrency */
  window?: number;
  /** called after each range is durable (Kafka commits offsets here) */
  onCommitted?: (range: CommittedRange) => Promise<void>;
  onProgress?: (p: StageCounters) => void;
  /** stop pulling new records; what is in flight still finishes and is committed */
  signal?: AbortSignal;
}

export interface CommittedRange {
  source: string;
  unit: string;
  first: string;
  last: string;
  firstOffset: number;
  lastOffset: number;
  records: number;
}

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
  ranges_committed: number;
  records_committed: number;
  tokens_in: number;
  tokens_out: number;
  cost_usd: number;
}

interface RangeBuffer {
  range: PlannedRange;
  source: string;
  pending: number;
  committing: boolean;
  /** by source offset: records finish in any order, shards are written in offset order */
  judged: Map<number, DerivedRows>;
  dead: Map<number, DeadLetterRow>;
}

/** The range's rows in offset order, so a rebuilt range has the same bytes whatever the timing. */
function rangeTables(buf: RangeBuffer): ShardRows {
  const judged = [...buf.judged.entries()].sort((a, b) => a[0] - b[0]).map(([, r]) => r);
  return {
    verdicts: judged.map((r) => r.verdict),
    defects: judged.flatMap((r) => r.defects),
    steps: judged.flatMap((r) => r.steps),
    decisions: judged.map((r) => r.decision),
    dead_letters: [...buf.dead.entries()].sort((a, b) => a[0] - b[0]).map(([, d]) => d),
  };
}

function deadRow(position: SourcePosition, error: string, rawText: string, truncated: boolean): DeadLetterRow {
  const t = truncateRaw(rawText);
  return { source: position.source, source_unit: position.unit, source_offset: position.offset, error, raw: t.raw, raw_truncated: truncated || t.raw_truncated };
}

/** Input size used for range rotation: deterministic from the record, cheap to compute. */
function recordChars(r: TraceRecord): number {
  return r.problem.length + (r.trace?.length ?? 0) + (r.steps?.reduce((a, s) => a + s.length, 0) ?? 0) + (r.final_solution?.length ?? 0);
}

export async function runStage(opts: StageOptions): Promise<StageCounters> {
  const { config, runtime, committer } = opts;
  const counters: StageCounters = { read: 0, skipped_committed: 0, in_flight: 0, judged: 0, clean: 0, degraded: 0, no_verdict: 0, dead_letters: 0, ranges_committed: 0, records_committed: 0, tokens_in: 0, tokens_out: 0, cost_usd: 0 };
  const window = new Window(opts.window ?? 2 * opts.range.maxRecords + opts.concurrency);
  const judges = new PQueue({ concurrency: opts.concurrency });
  const buffers = new Map<number, RangeBuffer>();
  let commitChain: Promise<void> = Promise.resolve();
  let fatal: unknown = null;

  const commit = async (buf: RangeBuffer): Promise<void> => {
    const { range } = buf;
    const first = positionString(range.unitToken, range.firstOffset, buf.source);
    const last = positionString(range.unitToken, range.lastOffset, buf.source);
    await committer.commit({
      source: buf.source,
      first,
      last,
      tables: rangeTables(buf),
      extra: { unit: range.unit, unit_token: range.unitToken, first_offset: range.firstOffset, last_offset: range.lastOffset, records: range.items },
    });
    buffers.delete(range.id);
    counters.ranges_committed += 1;
    counters.records_committed += range.items;
    await opts.onCommitted?.({ source: buf.source, unit: range.unit, first, last, firstOffset: range.firstOffset, lastOffset: range.lastOffset, records: range.items });
    window.release(range.items);
    opts.onProgress?.(counters);
  };

  const maybeCommit = (buf: RangeBuffer): void => {
    if (!buf.range.closed || buf.pending > 0 || buf.committing) return;
    buf.committing = true;
    commitChain = commitChain.then(() => (fatal ? undefined : commit(buf))).catch((err) => {
      fatal ??= err;
    });
  };

  const planner = new RangePlanner(opts.range, opts.committed, (r) => {
    const buf = buffers.get(r.id);
    if (buf) maybeCommit(buf);
  });

  const finish = (buf: RangeBuffer): void => {
    buf.pending -= 1;
    opts.onProgress?.(counters);
    maybeCommit(buf);
  };

  const addDead = (buf: RangeBuffer, item: SourceDeadItem | { position: SourcePosition; error: string; rawText: string; rawTextTruncated: boolean }) => {
    buf.dead.set(item.position.offset, deadRow(item.position, item.error, item.rawText, item.rawTextTruncated));
    counters.dead_letters += 1;
  };

  for await (const item of opts.source) {
    if (opts.signal?.aborted || fatal) break;
    const mapped = mapSourceItem(item, config.input.mapping);
    const chars = mapped.ok ? recordChars(mapped.record) : mapped.rawText.length;
    const assigned = planner.assign(item.position.unit, unitToken(item.position), item.position.offset, chars);
    if (assigned.skip) {
      counters.skipped_committed += 1;
      continue;
    }
    await window.acquire();
    counters.read += 1;
    let buf = buffers.get(assigned.range.id);
    if (!buf) buffers.set(assigned.range.id, (buf = { range: assigned.range, source: item.position.source, pending: 0, committing: false, judged: new Map(), dead: new Map() }));
    buf.pending += 1;
    const b = buf;
    if (!mapped.ok) {
      addDead(b, mapped);
      finish(b);
      continue;
    }
    const prepared = prepareRecord(mapped.record, config);
    if (!prepared.ok) {
      addDead(b, { position: item.position, error: prepared.error, rawText: JSON.stringify(item.ok ? item.raw : null), rawTextTruncated: false });
      finish(b);
      continue;
    }
    counters.in_flight += 1;
    void judges.add(async () => {
      const record = mapped.record;
      try {
        runtime.observe(record);
        const verdict = await judgeRecord(runtime.jury, prepared.input);
        const rows = deriveRows(verdict, item.position, record.meta, config);
        b.judged.set(item.position.offset, rows);
        counters.judged += 1;
        if (verdict.error) counters.no_verdict += 1;
        else if (verdict.degraded) counters.degraded += 1;
        else counters.clean += 1;
        counters.tokens_in += rows.verdict.tokens_in;
        counters.tokens_out += rows.verdict.tokens_out;
        counters.cost_usd += rows.verdict.cost_usd;
      } catch (err) {
        // A bug must not lose the record: it leaves as a dead letter with the reason.
        addDead(b, { position: item.position, error: `internal error while judging: ${(err as Error).message}`, rawText: JSON.stringify(record), rawTextTruncated: false });
      } finally {
        runtime.forget(record);
        counters.in_flight -= 1;
        finish(b);
      }
    });
    // Keep the judging queue short: records wait in the source, not in memory.
    if (judges.size > 0) await judges.onSizeLessThan(1);
  }
  planner.closeAll();
  await judges.onIdle();
  // Every range is closed and complete now; wait for the last commits.
  for (const buf of buffers.values()) maybeCommit(buf);
  await commitChain;
  if (fatal) throw fatal;
  return counters;
}
