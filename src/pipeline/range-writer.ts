/**
 * One range of one source unit, from its first record to its commit, with an explicit state:
 *
 *   open ──(planner closed it, every record in)──► complete ──► writing ──► committed | existing
 *     │                                                             └────► skipped | conflicted
 *     └──(unit revoked before writing)──► dropped
 *
 * Records finish in any order; the writer keeps them by source offset so a rebuilt range has
 * the same bytes whatever the timing. `commitRange` below is the commit protocol, in one place:
 *
 *   1. its manifest is already there        → existing (a restart, or another writer won)
 *   2. a streaming source refuses the write → skipped | conflicted, nothing written
 *   3. sinks publish the range (Kafka verdict events, dead-letter topic), then its part files
 *      and manifest are written             → committed (or existing, if a racer's manifest won)
 *   4. the source is told the outcome, and the positions that are now safe are pulled from it
 *      and handed back to be acknowledged (Kafka: committed to the group)
 *
 * Sinks publish before the manifest, so a crash repeats a publication rather than skip it.
 */
import type { Hash } from 'node:crypto';
import type { DeadLetterRow, ManifestRange, RangeSettings } from '../../schemas/outputs.js';
import type { Logger } from '../util/log.js';
import type { DerivedRows } from '../derive/rows.js';
import type { Duplicate } from './duplicate-ids.js';
import { corpusRow } from '../derive/corpus.js';
import type { Schema } from 'apache-arrow';
import type { CorpusBatch } from './corpus.js';
import type { Envelope } from './envelope.js';
import { foldDigest, newContentHash } from './input-identity.js';
import { positionString } from './positions.js';
import type { PlannedRange } from './range-planner.js';
import type { ShardCommitter } from './shard-commit.js';
import { StorageError } from './storage-error.js';
import type { CommitRequest, RangeSink, ShardRows } from './sink.js';
import type { RangeClaim, RangeOutcome, Source } from './source.js';

export type RangeState = 'open' | 'complete' | 'writing' | 'dropped' | RangeOutcome;

export class RangeWriter {
  private current: RangeState = 'open';
  private closed = false;
  private readonly judged = new Map<number, DerivedRows>();
  private readonly dead = new Map<number, DeadLetterRow>();
  /** later copies of a record id, dropped unjudged (input.duplicate_ids: keep_first) */
  private readonly duplicates = new Map<number, Duplicate>();
  /** content hash of the records assigned so far (./input-identity.ts); absent when not tracked */
  private content: Hash | undefined;
  /** the judged records as read, for the corpus (one range of one unit: one input schema) */
  private readonly inputs = new Map<number, { raw: unknown; position: Envelope['position'] }>();
  private columns: Schema | undefined;

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
    return this.judged.size + this.dead.size + this.duplicates.size;
  }

  /** A record assigned to the range, in offset order: folded into its content hash. */
  digest(offset: number, digest: string): void {
    foldDigest((this.content ??= newContentHash()), offset, digest);
  }

  /** A later copy of a record id, dropped unjudged; true when that made the range complete. */
  addDuplicate(offset: number, d: Duplicate): boolean {
    if (this.current !== 'open') return false;
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
  add(env: Envelope): boolean {
    if (this.current !== 'open') return false; // dropped meanwhile: its rows are never written
    if (env.dead) this.dead.set(env.position.offset, env.dead);
    else {
      this.judged.set(env.position.offset, env.rows!);
      this.inputs.set(env.position.offset, { raw: env.item.ok ? env.item.raw : null, position: env.position });
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
      .map(([offset, input]) => ({ row: corpusRow(this.judged.get(offset)!, input.position), raw: input.raw }));
    return { format, entries, ...(this.columns ? { columns: this.columns } : {}) };
  }
}

// ---- The commit protocol ------------------------------------------------------------------

export interface RangeCommitDeps {
  committer: ShardCommitter;
  source: Source;
  sinks: readonly RangeSink[];
  settings: RangeSettings;
  log: Logger;
}

export function commitRequest(w: RangeWriter, settings: RangeSettings): CommitRequest {
  const p = w.plan;
  return {
    source: w.source,
    first: w.first,
    last: w.last,
    tables: w.tables(),
    ...(settings.corpus && settings.corpus !== 'off' ? { corpus: w.corpus(settings.corpus) } : {}),
    range: { unit: p.unit, unit_token: p.unitToken, first_offset: p.firstOffset, last_offset: p.lastOffset, records: p.items, ...w.rangeFacts() },
    settings,
  };
}

async function write(w: RangeWriter, deps: RangeCommitDeps): Promise<RangeOutcome> {
  if (await deps.committer.committed(w.first, w.last)) return 'existing';
  const clearance = (await deps.source.streaming?.clearance(w.claim())) ?? { write: true };
  if (!clearance.write) {
    deps.log.info(`range ${w.first}..${w.last} not written (${clearance.outcome}): ${clearance.reason}`, { range: `${w.first}..${w.last}`, unit: w.plan.unit });
    return clearance.outcome;
  }
  const req = commitRequest(w, deps.settings);
  for (const sink of deps.sinks) await sink.publish(req);
  const res = await deps.committer.commit(req);
  return res.alreadyCommitted ? 'existing' : 'committed';
}

/**
 * Runs the protocol for a complete range and returns how it ended. A store that is down is
 * waited out below (the committer's store retries, ./storage-retry.ts); a StorageError that
 * gets here ends the stage, and it names this range.
 */
export async function commitRange(w: RangeWriter, deps: RangeCommitDeps): Promise<RangeOutcome> {
  w.startWriting();
  const outcome = await write(w, deps).catch((err: unknown) => {
    throw err instanceof StorageError ? err.inRange(`${w.first}..${w.last}`) : err;
  });
  w.finish(outcome);
  const streaming = deps.source.streaming;
  if (streaming) {
    streaming.rangeDone({ ...w.claim(), first: w.first, last: w.last, records: w.plan.items, outcome });
    const safe = streaming.safeOffsets();
    if (safe.length) await streaming.acknowledge(safe);
  }
  return outcome;
}
