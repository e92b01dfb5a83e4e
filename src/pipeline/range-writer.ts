/**
 * One range of one source unit, from its first record to its commit, with an explicit state:
 *
 *   open ──(planner closed it, every record in)──► complete ──► writing ──► committed | existing
 *     │                                                             └────► skipped | conflicted
 *     └──(unit revoked before writing)──► dropped
 *
 * Records finish in any order; the writer keeps them by source offset so a rebuilt range has
 * the same bytes whatever the timing.
 */
import type { DeadLetterRow } from '../../schemas/outputs.js';
import type { DerivedRows } from '../derive/rows.js';
import type { Envelope } from './envelope.js';
import { positionString } from './positions.js';
import type { PlannedRange } from './range-planner.js';
import type { ShardRows } from './sink.js';
import type { RangeClaim, RangeOutcome } from './source.js';

export type RangeState = 'open' | 'complete' | 'writing' | 'dropped' | RangeOutcome;

export class RangeWriter {
  private current: RangeState = 'open';
  private closed = false;
  private readonly judged = new Map<number, DerivedRows>();
  private readonly dead = new Map<number, DeadLetterRow>();

  constructor(
    readonly plan: PlannedRange,
    /** partition value of the shards (`source=<name>`) */
    readonly source: string,
  ) {}

  get state(): RangeState {
    return this.current;
  }

  /** Records finished so far (rows or dead letters). */
  get done(): number {
    return this.judged.size + this.dead.size;
  }

  get first(): string {
    return positionString(this.plan.unitToken, this.plan.firstOffset, this.source);
  }

  get last(): string {
    return positionString(this.plan.unitToken, this.plan.lastOffset, this.source);
  }

  /** A finished record; true when that made the range complete. */
  add(env: Envelope): boolean {
    if (this.current !== 'open') return false; // dropped meanwhile: its rows are never written
    if (env.dead) this.dead.set(env.position.offset, env.dead);
    else this.judged.set(env.position.offset, env.rows!);
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
    if (this.current !== 'open' || !this.closed || this.done < this.plan.items) return false;
    this.current = 'complete';
    return true;
  }

  /** Revoked unit: true when the range could still be dropped (it was not being written). */
  drop(): boolean {
    if (this.current !== 'open' && this.current !== 'complete') return false;
    this.current = 'dropped';
    return true;
  }

  startWriting(): void {
    this.expect('complete');
    this.current = 'writing';
  }

  finish(outcome: RangeOutcome): void {
    this.expect('writing');
    this.current = outcome;
  }

  private expect(state: RangeState): void {
    if (this.current !== state) throw new Error(`range ${this.first}..${this.last} is ${this.current}, expected ${state}`);
  }

  claim(): RangeClaim {
    const { unit, unitToken, firstOffset, lastOffset } = this.plan;
    return { unit, unitToken, firstOffset, lastOffset, offsets: [...this.judged.keys(), ...this.dead.keys()] };
  }

  /** The range's rows in offset order. */
  tables(): ShardRows {
    const judged = [...this.judged.entries()].sort((a, b) => a[0] - b[0]).map(([, r]) => r);
    return {
      verdicts: judged.map((r) => r.verdict),
      defects: judged.flatMap((r) => r.defects),
      steps: judged.flatMap((r) => r.steps),
      decisions: judged.map((r) => r.decision),
      dead_letters: [...this.dead.entries()].sort((a, b) => a[0] - b[0]).map(([, d]) => d),
    };
  }
}
