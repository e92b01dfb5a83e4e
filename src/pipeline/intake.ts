/**
 * The intake chain: where a record pulled from the source is admitted, in small transforms,
 * each counting its own fields of the stage's counters:
 *
 *   mapping          source row → record, or a dead letter (./record-mapping.ts `intake`)
 *   (the stage takes the record's window slot here)
 *   revocation       a record of a unit revoked while it waited for its slot is dropped   dropped_revoked
 *   duplicate ids    its id is remembered, an earlier copy noted (./duplicate-ids.ts)
 *   resume gate      its range; a committed range's records stop here (./resume-gate.ts)   read, skipped_committed, ranges_retracted
 *   duplicate policy a later copy becomes a dead letter, or is dropped into its manifest    duplicates_dropped
 *
 * What passes is routed: to be judged, to finish as a dead letter, or to be listed as a dropped
 * duplicate, each with its range and (identity checks on) the digest for its content hash.
 */
import type { DuplicateIdPolicy } from '../../schemas/config.js';
import type { Logger } from '../util/log.js';
import { type Admitted, type Dead, deadLetter } from './envelope.js';
import { type Duplicate, DuplicateIds, duplicateReason } from './duplicate-ids.js';
import { type IdentityOptions, itemDigest } from './input-identity.js';
import { unitToken } from './positions.js';
import type { PlannedRange, RangePlanner } from './range-planner.js';
import { intake, type IntakeSettings } from './record-mapping.js';
import { type Held, ResumeGate, type ResumeGateEvents } from './resume-gate.js';
import type { SourceItem } from './source.js';
import type { StageCounters } from './stage-counters.js';

/** Where an admitted record goes next, with its range and its digest for the range's content hash. */
export type Routed = { range: PlannedRange; digest: string | undefined } & (
  | { to: 'judge'; env: Admitted }
  | { to: 'finish'; env: Dead }
  | { to: 'drop-duplicate'; env: Admitted; duplicate: Duplicate }
);

/** A mapped record waiting for its window slot. */
export interface Mapped extends Omit<Held, 'dup'> {
  /** its unit's generation when it was pulled: a revocation since then drops it */
  generation: number;
}

export interface IntakeOptions {
  settings: IntakeSettings;
  duplicateIds: DuplicateIdPolicy;
  identity: IdentityOptions | undefined;
  counters: StageCounters;
  log: Logger;
}

export class IntakeChain {
  private readonly duplicates: DuplicateIds;
  private readonly gate: ResumeGate;
  /** bumped when a unit is dropped: a record pulled before that must not start a range */
  private readonly generations = new Map<string, number>();

  constructor(
    private readonly opts: IntakeOptions,
    planner: RangePlanner,
    private readonly route: (r: Routed) => void,
    on: Omit<ResumeGateEvents, 'placed'>,
  ) {
    this.duplicates = new DuplicateIds(opts.duplicateIds);
    this.gate = new ResumeGate(planner, opts.identity, opts.counters, opts.log, { ...on, placed: (h, range) => this.placed(h, range) });
  }

  /** Mapping, before the record takes a window slot (its input size decides its range). */
  map(item: SourceItem): Mapped {
    const token = unitToken(item.position);
    const generation = this.generations.get(token) ?? 0;
    return { ...intake(item, this.opts.settings), token, generation };
  }

  /** The rest of the chain, once the record holds its slot; false when it was dropped (its slot is the caller's to free). */
  admit(m: Mapped): boolean {
    if ((this.generations.get(m.token) ?? 0) !== m.generation) {
      this.opts.counters.dropped_revoked += 1;
      return false;
    }
    this.gate.offer({ env: m.env, chars: m.chars, token: m.token, dup: this.duplicates.see(m.env) });
    return true;
  }

  /** The input ended. */
  end(): void {
    this.gate.end();
  }

  /** A unit was revoked with `records` of it unwritten: records of it pulled before now are dropped too. */
  revoked(token: string, records: number): void {
    this.generations.set(token, (this.generations.get(token) ?? 0) + 1);
    this.opts.counters.dropped_revoked += records;
  }

  /** The duplicate-id policy, on a record that passed the gate. */
  private placed(h: Held, range: PlannedRange): void {
    const { env, dup } = h;
    const digest = this.opts.identity ? itemDigest(env.item) : undefined;
    if (env.dead) return this.route({ to: 'finish', range, digest, env });
    if (!dup) return this.route({ to: 'judge', range, digest, env });
    if (this.duplicates.policy === 'keep_first') {
      this.opts.counters.duplicates_dropped += 1;
      return this.route({ to: 'drop-duplicate', range, digest, env, duplicate: dup });
    }
    const dead = deadLetter(env.position, duplicateReason(dup), JSON.stringify(env.record));
    this.route({ to: 'finish', range, digest, env: { ...env, dead } });
  }
}
