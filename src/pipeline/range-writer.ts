/**
 * One range of one source unit, from its first record to its commit: the records it holds and
 * its state (./range-state.ts, the states and their transitions in one table). Records finish
 * in any order; the writer keeps them by source offset so a rebuilt range has the same bytes
 * whatever the timing. How a complete range becomes durable is ./range-commit.ts.
 */
import type { Hash } from 'node:crypto';
import type { DeadLetterRow, ManifestRange, RangeSettings } from '../../schemas/outputs.js';
import type { Logger } from '../util/log.js';
import type { DerivedRows } from '../derive/rows.js';
import type { Duplicate } from './duplicate-ids.js';
import { corpusRow } from '../derive/corpus.js';
import type { Schema } from 'apache-arrow';
import type { CorpusBatch } from './commit/corpus.js';
import type { Finished } from './envelope.js';
import { foldDigest, newContentHash } from './input-identity.js';
import { positionString } from './positions.js';
import type { PlannedRange } from './range-planner.js';
import { RangeLifecycle, RangeState, type StateObserver } from './range-state.js';
import type { ShardRows } from './sink.js';
import type { RangeClaim } from './source.js';

export class RangeWriter {
  /** every state change goes through it (./range-state.ts) */
  readonly lifecycle: RangeLifecycle;
  private closed = false;
  private readonly judged = new Map<number, DerivedRows>();
  private readonly dead = new Map<number, DeadLetterRow>();
  /** later copies of a record id, dropped unjudged (input.duplicate_ids: keep_first) */
  private readonly duplicates = new Map<number, Duplicate>();
  /** content hash of the records assigned so far (./input-identity.ts); absent when not tracked */
  private content: Hash | undefined;
  /** the judged records as read, for the corpus (one range of one unit: one input schema) */
  private readonly inputs = new Map<number, { raw: unknown; position: Finished['position']; rows: DerivedRows }>();
  private columns: Schema | undefined;

  constructor(
    readonly plan: PlannedRange,
    /** partition value of the shards (`source=<name>`) */
    readonly source: string,
    observe?: StateObserver,
  ) {
    this.lifecycle = new RangeLifecycle(() => `${this.first}..${this.last}`, observe);
  }

  get state(): RangeState {
    return this.lifecycle.state;
  }

  /** Records finished so far (rows or dead letters). */
  get done(): number {
    return this.judged.size + this.dead.size + this.duplicates.size;
  }

  /** A record assigned to the range, in offset order: folded into its content hash. */
  digest(offset: number, digest: string): void {
    foldDigest((this.content ??= newContentHash()), offset, digest);
  }

  /** A later copy of a record id, dropped unjudged; true when that made the range complete. */
  addDuplicate(offset: number, d: Duplicate): boolean {
    if (this.state !== RangeState.Open) return false;
    this.duplicates.set(offset, d);
    return this.checkComplete();
  }

  get first(): string {
    return positionString(this.plan.unitToken, this.plan.firstOffset, this.source);
  }

  get last(): string {
    return positionString(this.plan.unitToken, this.plan.lastOffset, this.source);
  }

  /** A finished record; true when that made the range complete. */
  add(env: Finished): boolean {
    if (this.state !== RangeState.Open) return false; // dropped meanwhile: its rows are never written
    if (env.dead) this.dead.set(env.position.offset, env.dead);
    else {
      this.judged.set(env.position.offset, env.rows);
      this.inputs.set(env.position.offset, { raw: env.item.ok ? env.item.raw : null, position: env.position, rows: env.rows });
      if (env.item.ok && env.item.columns) this.columns ??= env.item.columns;
    }
    return this.checkComplete();
  }

  /** The planner closed the range: no record joins it any more. True when that made it complete. */
  close(): boolean {
    this.closed = true;
    return this.checkComplete();
  }

  // Complete only once every record the planner put in it has finished: a range closed by
  // the very record being assigned waits for that record.
  private checkComplete(): boolean {
    if (this.state !== RangeState.Open || !this.closed || this.done < this.plan.items) return false;
    this.lifecycle.to(RangeState.Complete);
    return true;
  }

  /** Revoked unit: true when the range could still be dropped (its commit had not begun). */
  drop(): boolean {
    if (!this.lifecycle.can(RangeState.Dropped)) return false;
    this.lifecycle.to(RangeState.Dropped);
    return true;
  }

  claim(): RangeClaim {
    const { unit, unitToken, firstOffset, lastOffset } = this.plan;
    return { unit, unitToken, firstOffset, lastOffset, offsets: [...this.judged.keys(), ...this.dead.keys(), ...this.duplicates.keys()] };
  }

  /** What the manifest's `range` records beyond unit and offsets: content hash, dropped duplicates, usage. */
  rangeFacts(): Pick<ManifestRange, 'content_sha256' | 'duplicates' | 'usage'> {
    const dups = [...this.duplicates.entries()].sort((a, b) => a[0] - b[0]).map(([offset, d]) => ({ offset, ...d }));
    return { ...(this.content ? { content_sha256: this.content.copy().digest('hex') } : {}), ...(dups.length ? { duplicates: dups } : {}), usage: this.usage() };
  }

  /** The summed usage of the verdicts and repairs rows: a resumed run's budget counts earlier spend from it. */
  private usage(): NonNullable<ManifestRange['usage']> {
    const u = { tokens_in: 0, tokens_out: 0, cost_usd: 0 };
    // In offset order: a float sum in finish order would differ between two runs of one range.
    for (const [, { verdict: v, repairs }] of [...this.judged.entries()].sort((a, b) => a[0] - b[0])) {
      for (const x of [v, ...(repairs ?? [])]) {
        u.tokens_in += x.tokens_in;
        u.tokens_out += x.tokens_out;
        u.cost_usd += x.cost_usd ?? 0;
      }
    }
    return u;
  }

  /** The range's rows in offset order. */
  tables(): ShardRows {
    const judged = [...this.judged.entries()].sort((a, b) => a[0] - b[0]).map(([, r]) => r);
    return {
      verdicts: judged.map((r) => r.verdict),
      defects: judged.flatMap((r) => r.defects),
      steps: judged.flatMap((r) => r.steps),
      decisions: judged.map((r) => r.decision),
      verdict_details: judged.flatMap((r) => (r.detail ? [r.detail] : [])),
      dead_letters: [...this.dead.entries()].sort((a, b) => a[0] - b[0]).map(([, d]) => d),
      repairs: judged.flatMap((r) => r.repairs ?? []),
    };
  }

  /** The range's corpus: every judged record as read, in offset order, with its curation columns. */
  corpus(format: CorpusBatch['format']): CorpusBatch {
    const entries = [...this.inputs.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([, input]) => ({ row: corpusRow(input.rows, input.position), raw: input.raw }));
    return { format, entries, ...(this.columns ? { columns: this.columns } : {}) };
  }
}
