/**
 * What the source knows about one assigned partition, and how a fetched batch updates it.
 * Kept apart from the source so the offset bookkeeping can be read (and tested) on its own.
 */
import { CoveredOffsets } from './offsets.js';
import type { InBatch, InMessage, PartitionOffsets, TopicPartition } from './port.js';

export interface Part {
  tp: TopicPartition;
  unit: string;
  /** set by the first batch after assignment: from there on the commit point is known */
  covered?: CoveredOffsets;
  /** next offset we need from the log */
  expected: number;
  /** offset last committed to the group by us */
  committed: number;
  highWatermark: number;
  lastBatchAt: number;
  buffered: number;
  /** yielded records not yet closed into a range by a flush or rotation */
  dirty: boolean;
  /** messages handed to the stage, kept until their range commits (dead-letter originals) */
  held: Map<number, InMessage>;
}

export const unitOf = (tp: TopicPartition): string => `${tp.topic}+${tp.partition}`;

export function newPart(tp: TopicPartition): Part {
  return { tp, unit: unitOf(tp), expected: 0, committed: -1, highWatermark: -1, lastBatchAt: Date.now(), buffered: 0, dirty: false, held: new Map() };
}

/**
 * The first batch after assignment fetched from the group's committed offset (or the earliest):
 * that is the commit point, and `done` (ranges an earlier owner committed) is covered already.
 */
export function startAt(part: Part, fetchedOffset: number, done: ReadonlyArray<{ first: number; last: number }>): void {
  const covered = new CoveredOffsets(fetchedOffset);
  for (const r of done) covered.add(r.first, r.last);
  part.covered = covered;
  part.expected = fetchedOffset;
  part.committed = fetchedOffset;
}

/**
 * Applies a batch: offsets the fetch skipped hold no visible message and count as covered;
 * re-delivered messages (below `expected`) and committed ones are dropped. Returns the
 * messages to hand to the stage, and how many were skipped as committed.
 */
export function intake(part: Part, b: InBatch): { fresh: InMessage[]; committed: number } {
  const covered = part.covered;
  if (!covered) throw new Error(`${part.unit}: batch before the partition's start is known`);
  if (b.fetchedOffset > part.expected) {
    covered.add(part.expected, b.fetchedOffset - 1);
    part.expected = b.fetchedOffset;
  }
  const fresh: InMessage[] = [];
  let committed = 0;
  for (const m of b.messages) {
    if (m.offset < part.expected) continue; // re-delivered after a rebalance: already taken
    if (m.offset > part.expected) covered.add(part.expected, m.offset - 1);
    part.expected = m.offset + 1;
    if (covered.has(m.offset)) committed++;
    else fresh.push(m);
  }
  part.highWatermark = b.highWatermark;
  part.lastBatchAt = Date.now();
  return { fresh, committed };
}

/**
 * Where the group stands for `--until-caught-up`: `reading` while one of our partitions has
 * unread messages, `others` while another member's partition is not committed to its end,
 * `done` when everything is read here and committed elsewhere.
 */
export function drainState(parts: ReadonlyMap<string, Part>, offsets: readonly PartitionOffsets[]): 'reading' | 'others' | 'done' {
  let others = false;
  for (const o of offsets) {
    const part = parts.get(unitOf(o));
    if (part) {
      const position = part.covered ? part.expected : o.committed >= 0 ? o.committed : o.low;
      if (position < o.high) return 'reading';
    } else if (Math.max(o.committed, o.low) < o.high) {
      others = true;
    }
  }
  return others ? 'others' : 'done';
}
