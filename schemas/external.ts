/**
 * External judges seated as jurors (`jurors[]` with `kind: external`): judgements someone
 * already has (a PRM's step scores, a critic's recorded outputs, an earlier jury run) read
 * instead of asked for. README "External judges as jurors" describes how they take part.
 */
import { z } from 'zod';
import { Impact } from './defect.js';

export const EXTERNAL_FORMATS = ['step_scores', 'defects', 'first_error', 'sections', 'verdicts'] as const;
export const ExternalFormat = z.enum(EXTERNAL_FORMATS);
export type ExternalFormat = z.infer<typeof ExternalFormat>;

/** What a seat does for a record its source does not have (README, "A record the source lacks"). */
export const MissingRecordPolicy = z.enum(['fail', 'abstain', 'dead_letter']);
export type MissingRecordPolicy = z.infer<typeof MissingRecordPolicy>;

/** The `field` read when none is given, per format (step_scores has none: it must be named). */
export const DEFAULT_EXTERNAL_FIELD: Readonly<Record<Exclude<ExternalFormat, 'step_scores' | 'verdicts'>, string>> = {
  defects: 'defects',
  first_error: 'prediction',
  sections: 'error_section_numbers',
};

export const SeverityBand = z
  .object({
    at_least: z.number().min(0).max(1).describe('Lowest error probability (see `polarity`) of this band.'),
    impact: Impact.describe('Severity of a flagged step whose error probability is in this band.'),
  })
  .strict()
  .describe('One band of `severity`.');
export type SeverityBand = z.infer<typeof SeverityBand>;

const fileFormats: ReadonlySet<ExternalFormat> = new Set(['defects', 'first_error', 'sections', 'verdicts']);

export const ExternalSeatConfig = z
  .object({
    id: z.string().min(1).describe('Seat name, unique among jurors: it names the seat in verdicts (`phase1_judgements`, `voters`) like a model juror\'s id.'),
    kind: z.literal('external').describe('`external`: the seat reads judgements from `format`\'s source instead of calling a model (no endpoint, no tokens, no cost).'),
    format: ExternalFormat.describe(
      'Where its judgements come from. `step_scores`: a list of per-step probabilities in each input record (at `field`), turned into defects by `threshold` and `severity`. `defects`: a file of records whose `field` is a list of defects in our schema (`statement_refs`, `impact`, `what_went_wrong`, `evidence`). `first_error`: a file whose `field` is the index of the earliest erroneous step, -1 for none (ProcessBench predictions). `sections`: a file whose `field` is a list of erroneous section (step) numbers, 1-based (DeltaBench). `verdicts`: the final verdicts of an earlier reasoning-jury run (its output folder with `_commits/`, or verdict JSONL).',
    ),
    path: z.string().min(1).optional().describe('Required by every format except `step_scores`: the file (`.parquet`, else JSON Lines) or, for `verdicts`, the earlier run\'s output folder or its verdict JSONL (a file or a folder of `*.jsonl`). Read once at start; a relative path is relative to the config file.'),
    field: z.string().min(1).optional().describe('`step_scores` (required): dotted path of the score list in each input row, as `input.mapping` paths are. `defects` / `first_error` / `sections`: path of the judgement in each line or row of `path`; default `defects`, `prediction`, `error_section_numbers`.'),
    id_field: z.string().min(1).default('id').describe('Path of the record id in each line or row of `path` (a number is turned into a string); a source listing one id twice is refused at start. Not used by `step_scores` and `verdicts`.'),
    polarity: z.enum(['correct', 'error']).default('correct').describe('`step_scores`: what a score is the probability of: `correct` (a PRM\'s usual P(step is right); error probability = 1 − score) or `error`.'),
    threshold: z.number().min(0).max(1).default(0.5).describe('`step_scores`: a step is flagged when its error probability is at least this.'),
    severity: z
      .array(SeverityBand)
      .min(1)
      .default([{ at_least: 0, impact: 'major' }])
      .describe('`step_scores`: severity of a flagged step by its error probability: the band with the highest `at_least` not above it (a step below every band is `minor`). Default: every flagged step is `major`, since a score carries no calibrated severity.'),
    impact: Impact.default('major').describe('`first_error` and `sections`: severity given to each step they name (the sources say only that a step is wrong).'),
    index_base: z.union([z.literal(0), z.literal(1)]).default(0).describe('`first_error`: 0 when the index counts steps from 0 (ProcessBench), 1 when from 1; -1 means no error either way.'),
    on_missing: MissingRecordPolicy.default('fail').describe(
      'A record the source does not have (no line or row with its id, no verdict for it, no value at `field`): `fail` (default) seats it as a failed juror: the verdict is degraded, names the seat and why, and `min_jurors` counts it; `abstain` leaves the seat out of that record (not seated, not counted, not degraded); `dead_letter` makes the record a dead letter "record not in external source of seat ...", unjudged.',
    ),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.format === 'step_scores' && !s.field) ctx.addIssue({ code: 'custom', path: ['field'], message: 'required for format "step_scores"' });
    if (fileFormats.has(s.format) && !s.path) ctx.addIssue({ code: 'custom', path: ['path'], message: `required for format "${s.format}"` });
    if (s.format === 'step_scores' && s.path) ctx.addIssue({ code: 'custom', path: ['path'], message: 'format "step_scores" reads the input records, not a file' });
  })
  .describe('An external judge seated as a juror (`kind: external`): it takes part in union, majority, consolidation and the eval ladder like a model juror, and in deliberation as Phase 1 findings that never speak.');
export type ExternalSeatConfig = z.infer<typeof ExternalSeatConfig>;

/** A seat of `jurors`: external, or a model seat (no `kind`, or `kind: model`). */
export const isExternalSeat = <T extends { kind?: string }>(s: T): s is Extract<T, { kind: 'external' }> => s.kind === 'external';
