/**
 * External judges as jurors (`kind: external`): their Phase 1 judgement is read, not asked for.
 * A seat's judgement for a record comes from the record itself (`step_scores`) or from a source
 * loaded once at start (src/compose/external-sources.ts); it then enters union, majority,
 * consolidation and deliberation exactly as a model juror's does. No model call, no usage row,
 * so nothing in the ledger, the response cache or the prompt hash changes.
 */
import type { ExternalSeatConfig } from '../../../schemas/external.js';
import type { Defect } from '../../../schemas/defect.js';
import type { Judgement } from '../../../schemas/verdict.js';
import { type Converted, fromDefects, fromFirstError, fromSections, fromStepScores } from './convert.js';
import { ReasoningJuryError } from '../../util/errors.js';

/** What a loaded source holds for one record. */
export type ExternalEntry =
  /** `defects`, `first_error`, `sections`: the value at the seat's `field` */
  | { kind: 'value'; value: unknown }
  /** `verdicts`: an earlier run's final verdict */
  | { kind: 'verdict'; n_steps: number; error: string | null; defects: Defect[] };

/** Loaded external sources by seat id (built at start by the command). */
export interface ExternalSources {
  /** undefined: the seat's source has no entry for the record */
  lookup(seatId: string, recordId: string): ExternalEntry | undefined;
  /** whether a source was loaded for the seat at all */
  loaded(seatId: string): boolean;
}

/** The record the seat judges: its id, step count and, for `step_scores`, the scores read at intake. */
export interface ExternalInput {
  id: string;
  steps: readonly unknown[];
  /** per step_scores seat id, the value at its `field` in the input row (absent: none there) */
  scores?: Readonly<Record<string, unknown>> | undefined;
}

/** A record the source lacks under `on_missing: dead_letter`: the record leaves unjudged with this reason. */
export class ExternalRecordMissing extends ReasoningJuryError {
  override get kind() {
    return 'internal' as const;
  }
  override readonly name = 'ExternalRecordMissing';
}

export type ExternalOutcome = { judgement: Judgement } | { abstain: true };

const modelLabel = (seat: ExternalSeatConfig) => `external:${seat.format}`;

function fromEntry(seat: ExternalSeatConfig, entry: ExternalEntry, nSteps: number): Converted {
  if (entry.kind === 'verdict') {
    if (entry.error !== null) return { ok: false, error: `the earlier run formed no verdict: ${entry.error}` };
    if (entry.n_steps !== nSteps) return { ok: false, error: `the earlier run read ${entry.n_steps} steps, this one ${nSteps} (segmented differently)` };
    return fromDefects(entry.defects, nSteps);
  }
  switch (seat.format) {
    case 'step_scores':
      return fromStepScores(entry.value, nSteps, seat);
    case 'defects':
      return fromDefects(entry.value, nSteps);
    case 'first_error':
      return fromFirstError(entry.value, nSteps, seat);
    case 'sections':
      return fromSections(entry.value, nSteps, seat);
    default:
      return { ok: false, error: `format ${seat.format} holds no recorded values` };
  }
}

function entryFor(seat: ExternalSeatConfig, input: ExternalInput, sources: ExternalSources | undefined): ExternalEntry | undefined | 'not_loaded' {
  if (seat.format === 'step_scores') {
    const v = input.scores?.[seat.id];
    return v === undefined || v === null ? undefined : { kind: 'value', value: v };
  }
  if (!sources?.loaded(seat.id)) return 'not_loaded';
  return sources.lookup(seat.id, input.id);
}

const where = (seat: ExternalSeatConfig) => (seat.format === 'step_scores' ? `field "${seat.field}" of the record` : `${seat.path}`);

/**
 * One external seat's Phase 1 judgement of a record. A record the source lacks follows the
 * seat's `on_missing` (fail / abstain / dead_letter: throws ExternalRecordMissing); a value of
 * the wrong shape always fails the seat for that record, naming what was wrong.
 */
export function externalJudgement(seat: ExternalSeatConfig, input: ExternalInput, sources: ExternalSources | undefined): ExternalOutcome {
  const base = { juror_id: seat.id, model: modelLabel(seat) };
  const failed = (error: string): ExternalOutcome => ({ judgement: { ...base, ok: false, defects: [], dropped_refs: 0, error } });
  const entry = entryFor(seat, input, sources);
  // A seat whose source was never loaded is a wiring fault of the caller, not a missing record.
  if (entry === 'not_loaded') return failed(`external source of seat ${seat.id} was not loaded`);
  if (entry === undefined) {
    const reason = `record ${input.id} not in external source of seat ${seat.id} (${where(seat)})`;
    if (seat.on_missing === 'abstain') return { abstain: true };
    if (seat.on_missing === 'dead_letter') throw new ExternalRecordMissing(reason);
    return failed(reason);
  }
  const c = fromEntry(seat, entry, input.steps.length);
  if (!c.ok) return failed(`external source of seat ${seat.id}: ${c.error}`);
  return { judgement: { ...base, ok: true, defects: c.defects, dropped_refs: c.droppedRefs } };
}
