import PQueue from 'p-queue';
import type { Source, SourceDeadItem } from './source.js';
import type { JuryConfig } from '../../schemas/config.js';
import { type DeadLetterRow, truncateRaw } from '../../schemas/outputs.js';
import type { SourcePosition, TraceRecord } from '../../schemas/trace.js';
import type { Verdict } from '../../schemas/verdict.js';
import { type DerivedRows, deriveRows } from '../derive/rows.js';
import { judgeRecord } from '../jury/judge.js';
import type { Runtime } from '../compose/runtime.js';
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
  /** runs on a record's rows before they are stored (taxonomy assignment fills defect columns) */
  enrich?: (rows: DerivedRows, verdict: Verdict) => Promise<DerivedRows>;
  /** hands the source's driver a way to close or drop a unit's ranges (Kafka idle / revoke) */
  control?: (ctl: StageControl) => void;
}

/** What a streaming source may ask of the stage while it runs; safe to call at any time. */
export interface StageControl {
  /** Close the unit's open range now (e.g. an idle partition): it commits once complete. */
  closeUnit(unitToken: string): void;
  /**
   * Forget the unit's uncommitted ranges (e.g. a revoked partition): their rows are never
   * written and the next owner re-reads them. A range already being written still finishes.
   * Returns how many records were dropped.
   */
  dropUnit(unitToken: string): number;
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
  /** records pulled but dropped unwritten because their unit was revoked (re-read by its next owner) */
  dropped_revoked: number;
  tokens_in: number;
  tokens_out: number;
  cost_usd: number;
}

interface RangeBuffer {
  range: PlannedRange;
  source: string;
  pending: number;
  committing: boolean;
  /** the commit has started writing: too late to drop */
  writing: boolean;
  /** dropped by StageControl.dropUnit: never written */
  dropped: boolean;
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
  const counters: StageCounters = { read: 0, skipped_committed: 0, in_flight: 0, judged: 0, clean: 0, degraded: 0, no_verdict: 0, dead_letters: 0, ranges_committed: 0, records_committed: 0, dropped_revoked: 0, tokens_in: 0, tokens_out: 0, cost_usd: 0 };
  const window = new Window(opts.window ?? 2 * opts.range.maxRecords + opts.concurrency);
  const judges = new PQueue({ concurrency: opts.concurrency });
  const buffers = new Map<number, RangeBuffer>();
  let commitChain: Promise<void> = Promise.resolve();
  let fatal: unknown = null;

  const commit = async (buf: RangeBuffer): Promise<void> => {
    if (buf.dropped) return;
    buf.writing = true;
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
    if (buf.dropped || !buf.range.closed || buf.pending > 0 || buf.committing) return;
    buf.committing = true;
    commitChain = commitChain.then(() => (fatal ? undefined : commit(buf))).catch((err) => {
      fatal ??= err;
    });
  };

  // A range closed by assign() itself may be the one the record being assigned belongs to: its
  // commit must wait until that record is counted in it, or the range is written without it.
  let assigning = false;
  const closedWhileAssigning: PlannedRange[] = [];
  const planner = new RangePlanner(opts.range, opts.committed, (r) => {
    if (assigning) {
      closedWhileAssigning.push(r);
      return;
    }
    const buf = buffers.get(r.id);
    if (buf) maybeCommit(buf);
  });
  const commitClosedWhileAssigning = (): void => {
    for (const r of closedWhileAssigning.splice(0)) {
      const buf = buffers.get(r.id);
      if (buf) maybeCommit(buf);
    }
  };

  const finish = (buf: RangeBuffer): void => {
    buf.pending -= 1;
    if (buf.dropped) {
      window.release(1);
      return;
    }
    opts.onProgress?.(counters);
    maybeCommit(buf);
  };

  const addDead = (buf: RangeBuffer, item: SourceDeadItem | { position: SourcePosition; error: string; rawText: string; rawTextTruncated: boolean }) => {
    buf.dead.set(item.position.offset, deadRow(item.position, item.error, item.rawText, item.rawTextTruncated));
    counters.dead_letters += 1;
  };

  // Pull sequence numbers: an item pulled before its unit was dropped must not start a range.
  let pulled = 0;
  const droppedAt = new Map<string, number>();
  opts.control?.({
    closeUnit: (token) => planner.closeUnitNow(token),
    dropUnit: (token) => {
      let n = 0;
      for (const buf of [...buffers.values()]) {
        if (buf.range.unitToken !== token || buf.writing) continue;
        buf.dropped = true;
        buffers.delete(buf.range.id);
        window.release(buf.range.items - buf.pending); // in-flight ones release as they finish
        n += buf.range.items;
      }
      planner.closeUnitNow(token); // its open range, if any, had its buffer removed above
      droppedAt.set(token, pulled);
      counters.dropped_revoked += n;
      return n;
    },
  });

  // Interleaved units (Kafka partitions) can fill the window with open ranges that never fill
  // up: close the largest one early rather than wait forever.
  const breakStall = (): void => {
    let largest: RangeBuffer | undefined;
    for (const b of buffers.values()) {
      if (b.range.closed) return; // a closed range will commit and free slots
      if (!largest || b.range.items > largest.range.items) largest = b;
    }
    if (largest) planner.closeUnitNow(largest.range.unitToken);
  };

  for await (const item of opts.source) {
    if (opts.signal?.aborted || fatal) break;
    const seq = ++pulled;
    const mapped = mapSourceItem(item, config.input.mapping, { maxSteps: config.segmentation.max_steps });
    if (mapped.ok && item.ok && item.meta) mapped.record.meta = { ...item.meta, ...mapped.record.meta };
    const chars = mapped.ok ? recordChars(mapped.record) : mapped.rawText.length;
    const token = unitToken(item.position);
    if (window.inUse >= window.size) breakStall();
    // Take the slot before assigning: assignment and buffering must happen with no await in
    // between, or a range closed by this very record could commit before the record is in it.
    await window.acquire();
    if ((droppedAt.get(token) ?? 0) >= seq) {
      window.release(1);
      counters.dropped_revoked += 1;
      continue;
    }
    assigning = true;
    const assigned = planner.assign(item.position.unit, token, item.position.offset, chars);
    assigning = false;
    if (assigned.skip) {
      window.release(1);
      counters.skipped_committed += 1;
      commitClosedWhileAssigning();
      continue;
    }
    counters.read += 1;
    let buf = buffers.get(assigned.range.id);
    if (!buf) buffers.set(assigned.range.id, (buf = { range: assigned.range, source: item.position.source, pending: 0, committing: false, writing: false, dropped: false, judged: new Map(), dead: new Map() }));
    buf.pending += 1;
    const b = buf;
    commitClosedWhileAssigning();
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
        const derived = deriveRows(verdict, item.position, record.meta, config);
        const rows = opts.enrich ? await opts.enrich(derived, verdict) : derived;
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
