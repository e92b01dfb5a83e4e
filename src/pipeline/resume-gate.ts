/**
 * The resume / identity gate of the intake chain: each admitted record gets its range from the
 * planner (./range-planner.ts), and a record of a range that is already committed does not pass.
 *
 * Without identity checks such a record is let go at once. With them (./input-identity.ts) its
 * digest joins the committed range's check, and once the range's last record has been read the
 * range is settled: unchanged, its records are let go; changed, the run stops (`error`) or the
 * range and every later one of its unit are retracted and their records offered again, now to
 * be judged (`rejudge`: they were held, window slot and all, until then).
 *
 * Counts `read` (records that pass), `skipped_committed` and `ranges_retracted`.
 */
import type { Logger } from '../util/log.js';
import type { Admitted, Dead } from './envelope.js';
import type { Duplicate } from './duplicate-ids.js';
import { describeChange, foldDigest, InputChangedError, itemDigest, newContentHash, type IdentityOptions, type SkipCheck } from './input-identity.js';
import type { PlannedRange, RangePlanner } from './range-planner.js';
import type { StageCounters } from './stage-counters.js';

/** An admitted record holding its window slot, not yet placed in a range. */
export interface Held {
  env: Admitted | Dead;
  /** input size, for the range's size limit */
  chars: number;
  token: string;
  /** the earlier copy of its record id, if it is a later one (./duplicate-ids.ts) */
  dup: Duplicate | null;
}

export interface ResumeGateEvents {
  /** the record passed, into this range */
  placed(h: Held, range: PlannedRange): void;
  /** window slots of records let go */
  release(n: number): void;
  failed(err: unknown): void;
  /** runs a retraction on the commit chain, so it is done before any later range is written */
  beforeLaterCommits(task: () => Promise<void>): void;
}

export class ResumeGate {
  /** the committed range being read past, until its records are known unchanged */
  private pending: SkipCheck<Held> | null = null;

  constructor(
    private readonly planner: RangePlanner,
    private readonly identity: IdentityOptions | undefined,
    private readonly counters: Pick<StageCounters, 'read' | 'skipped_committed' | 'ranges_retracted'>,
    private readonly log: Logger,
    private readonly on: ResumeGateEvents,
  ) {}

  offer(h: Held): void {
    const pos = h.env.position;
    if (this.pending && (this.pending.unitToken !== h.token || pos.offset > this.pending.last)) this.settle(this.pending);
    const assigned = this.planner.assign(pos.unit, h.token, pos.offset, h.chars);
    if (assigned.skip) return this.skipped(h, assigned.first, assigned.last);
    this.counters.read += 1;
    this.on.placed(h, assigned.range);
  }

  /** The input ended: the committed range being read past is settled with what was read. */
  end(): void {
    if (this.pending) this.settle(this.pending);
  }

  private skipped(h: Held, first: number, last: number): void {
    const identity = this.identity;
    if (!identity) return this.letGo(1);
    const pos = h.env.position;
    let check = this.pending;
    if (!check || check.unitToken !== h.token || check.first !== first) {
      if (check) this.settle(check);
      const expectedRecords = identity.expected.get(h.token)?.get(first)?.records ?? 0;
      check = this.pending = { unit: pos.unit, unitToken: h.token, first, last, expectedRecords, hash: newContentHash(), seen: 0, held: [] };
    }
    foldDigest(check.hash, pos.offset, itemDigest(h.env.item));
    check.seen += 1;
    if (identity.policy === 'rejudge') check.held.push(h);
    else this.letGo(1);
    if (pos.offset >= last) this.settle(check);
  }

  private letGo(n: number): void {
    this.on.release(n);
    this.counters.skipped_committed += n;
  }

  /** A committed range's records have all been read: skip them, stop (error), or retract and judge them (rejudge). */
  private settle(check: SkipCheck<Held>): void {
    if (this.pending === check) this.pending = null;
    const identity = this.identity;
    const known = identity?.expected.get(check.unitToken);
    const expected = known?.get(check.first);
    // Manifests written before content hashes existed cannot be compared: trusted as before.
    const change = expected ? describeChange(check, expected.sha256) : null;
    if (!identity || !known || !change) return this.letGo(check.held.length);
    if (identity.policy === 'error') return this.on.failed(new InputChangedError(check.unit, change));
    this.log.warn(`input ${check.unit} changed since it was judged: ${change}; retracting its ranges from offset ${check.first} on and judging them again`, { unit: check.unit, first_offset: check.first });
    for (const first of [...known.keys()]) {
      if (first < check.first) continue;
      known.delete(first);
      this.counters.ranges_retracted += 1;
    }
    this.planner.uncommit(check.unitToken, check.first);
    this.on.beforeLaterCommits(() => identity.retract(check.unitToken, check.first));
    for (const h of check.held) this.offer(h);
  }
}
