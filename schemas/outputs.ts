import { z } from 'zod';
import { Impact } from './defect.js';
import { CallUsage, Phase } from './usage.js';
import { RepairRow } from './repair.js';
import { ADJUDICATION_SOURCES, ARBITER_RULINGS, CLAIM_CHECK_RESULTS, GROUNDING_ACTIONS, GROUNDING_STATUSES, JuryMode, QUOTE_MATCHES, TerminationReason } from './verdict.js';

/**
 * Rows of the shard tables (out/<table>/source=<name>/part-*.parquet). These zod schemas are the
 * one definition: TypeScript types come from z.infer and the Arrow/Parquet schemas are derived
 * from them by src/pipeline/commit/arrow-schema.ts, so a column is added here and nowhere else.
 *
 * Storage widths are explicit because Parquet readers type columns from them:
 *   int32()      -> Int32  (counts, step numbers: small by construction)
 *   int64()      -> Int64  (offsets, token totals: may outgrow 2^31)
 *   z.number()   -> Float64
 *   z.enum / dictString() -> Dictionary<Int32, Utf8> (low-cardinality strings)
 */

export { dictString, int32, int64, type ArrowHint } from './columns.js';
import { dictString, int32, int64 } from './columns.js';

const rate = z.number().min(0).max(1);

export const VerdictRow = z
  .object({
    record_id: z.string().min(1).describe('The record\'s id (input field `id`, or as mapped by `input.mapping`); joins every table.'),
    mode: JuryMode.describe('Jury mode that judged the record: single, union, majority, consolidation or deliberation.'),
    jurors_total: int32().nonnegative().describe('Phase 1 jurors seated for the record.'),
    jurors_ok: int32().nonnegative().describe('Phase 1 jurors whose judgement succeeded.'),
    phase1_seats: int32().nonnegative().nullable().describe('Cascade Phase 1 (`phase1.strategy: cascade`): seats that judged the record (the start seats plus every escalation; an external seat that abstained counts, `jurors_total` does not count it); null when every seat judges (`strategy: all`).'),
    escalations: z.array(z.string()).nullable().describe('Cascade Phase 1: why each escalation happened, one entry per escalation, `after <n> seats: <rule>[, <rule>] -> <seat ids added>` (empty: the start seats sufficed); null when every seat judges.'),
    n_steps: int32().nonnegative().describe('Number of steps ([STEP-n]) of the trace as the jury read it.'),
    n_defects: int32().nonnegative().describe('Consensus defects in the verdict (rows of `defects` for this record).'),
    max_impact: Impact.nullable().describe('Highest severity among the consensus defects (neutral < minor < major < fatal); null when there are none.'),
    confidence: rate.describe('Jury agreement on the verdict, 0..1 (mean share of successful jurors supporting each defect).'),
    n_dissent: int32().nonnegative().describe('Juror findings that did not make the verdict (its dissenting views); what filter rules on dissent test.'),
    termination_reason: TerminationReason.describe('How Phase 2 ended: not_applicable outside deliberation, else no_new_arguments, universal_agreement, cycling, turn_cap, skipped_unanimous, skipped_empty or error.'),
    rounds: int32().nonnegative().describe('Deliberation rounds held (0 outside deliberation or when it was skipped).'),
    degraded: z.boolean().describe('True when the verdict was formed with a failure along the way (a juror, the consolidator or a deliberation turn failed).'),
    degraded_reason: z.string().nullable().describe('What degraded the verdict; null when `degraded` is false.'),
    error: z.string().nullable().describe('Why no verdict could be formed (e.g. fewer than `min_jurors` succeeded); null for a real verdict.'),
    tokens_in: int64().nonnegative().describe('Prompt tokens of every model call for the record (jury and taxonomy).'),
    tokens_out: int64().nonnegative().describe('Completion tokens of every model call for the record.'),
    cost_usd: z.number().nonnegative().nullable().describe('USD cost of those calls at the configured `prices`; null when some call used a model without a price (unknown, not free).'),
    latency_ms: z.number().nonnegative().describe('Time the record waited on models: the slowest Phase 1 call plus every later call.'),
    prompt_hash: dictString().describe('Hash of the prompt templates used; equal hashes mean equal prompts.'),
    config_hash: dictString().describe('Hash of the verdict-shaping config (seats, models, mode, thresholds; not endpoints or paths).'),
    /** Also the Hive partition value (source=<name>): plain Utf8 so pyarrow can merge the two. */
    source: z.string().describe('Connector the record came from (file, s3, kafka, stdin); also the `source=` Hive partition.'),
    source_unit: dictString().describe('Unit of the source the record was read from: a file (path relative to the input root) or object, or a Kafka topic and partition.'),
    source_offset: int64().nonnegative().describe('Position of the record inside its unit (line or row number, or Kafka offset).'),
    meta: z.string().nullable().describe('JSON text of the record\'s `meta` fields (free-form, so not typed columns); null when empty.'),
  })
  .describe('One row per judged record: the verdict\'s summary, its cost and where the record came from.');
export type VerdictRow = z.infer<typeof VerdictRow>;

export const DefectRow = z
  .object({
    record_id: z.string().min(1).describe('The record the defect belongs to.'),
    /** Stable across re-runs of the same verdict: see defectId(). */
    defect_id: z.string().min(1).describe('`<record_id>#d<n>`, n the defect\'s position in the verdict: stable across re-runs of the same verdict.'),
    statement_refs: z.array(int32().positive()).describe('Steps the defect cites, 1-based (STEP-3 is 3).'),
    impact: Impact.describe('Severity: neutral, minor, major or fatal (paper App. D).'),
    what_went_wrong: z.string().describe('What is wrong at those steps, in the jury\'s words.'),
    evidence: z.string().describe('The quoted or paraphrased part of the trace that shows it.'),
    correct_value: z.string().nullable().describe('What the step should have said, when the jury gave it; else null.'),
    vote_count: int32().nonnegative().nullable().describe('Jurors supporting the defect, where the mode counts them (single does not); else null.'),
    /** Empty when the jury mode does not vote. */
    voters: z.array(z.string()).describe('Ids of the supporting jurors; empty where the mode does not count them.'),
    // Taxonomy columns: filled by the taxonomy step later, null until then.
    category_id: dictString().nullable().describe('Taxonomy category of the assigned leaf; null when taxonomy is off or nothing was assigned.'),
    leaf_id: dictString().nullable().describe('Taxonomy leaf assigned to the defect; null when taxonomy is off or nothing was assigned.'),
    taxonomy_status: dictString().nullable().describe('`assigned` or `unassigned:<reason>`; null when taxonomy assignment is off.'),
  })
  .describe('One row per consensus defect of a verdict.');
export type DefectRow = z.infer<typeof DefectRow>;

export const StepRow = z
  .object({
    record_id: z.string().min(1).describe('The record the step belongs to.'),
    /** 1-based, matching statement_refs and STEP-n. */
    step_index: int32().positive().describe('Step number, 1-based, matching `statement_refs` and STEP-n.'),
    max_impact: Impact.nullable().describe('Highest severity of the defects citing this step; null when none does, and on every step of a record without a verdict.'),
    label: z.boolean().nullable().describe('True when the step is erroneous: `max_impact` is at least `severity_threshold`. Null when the record has no verdict: unjudged, not clean.'),
    defect_ids: z.array(z.string()).describe('`defect_id`s of the defects citing this step.'),
  })
  .describe('One row per step of every judged record: the step-level labels.');
export type StepRow = z.infer<typeof StepRow>;

export { FILTER_DECISIONS, FilterDecision } from './columns.js';
import { FilterDecision } from './columns.js';

export const DecisionRow = z
  .object({
    record_id: z.string().min(1).describe('The record decided on.'),
    decision: FilterDecision.describe('keep, drop or review, from the `filter` policy.'),
    reason: dictString().describe('`<rule name>: <why it matched>`, or `no rule matched` when the policy default decided.'),
    n_neutral: int32().nonnegative().describe('Consensus defects of severity neutral.'),
    n_minor: int32().nonnegative().describe('Consensus defects of severity minor.'),
    n_major: int32().nonnegative().describe('Consensus defects of severity major.'),
    n_fatal: int32().nonnegative().describe('Consensus defects of severity fatal.'),
    fatal_step_rate: rate.describe('Share of the record\'s steps whose highest severity is fatal (0 for a record without steps).'),
    flagged_step_rate: rate.describe('Share of the record\'s steps labelled erroneous in `steps` (0 for a record without steps).'),
  })
  .describe('One row per judged record: the filter decision and the facts it was taken from.');
export type DecisionRow = z.infer<typeof DecisionRow>;

export const DeadLetterRow = z
  .object({
    source: z.string().describe('Connector the record came from; also the `source=` Hive partition.'), // = the partition value, see VerdictRow.source
    source_unit: dictString().describe('Unit of the source (file path, object key, topic+partition).'),
    source_offset: int64().nonnegative().describe('Position of the record inside its unit.'),
    error: z.string().describe('Why the record could not be judged (bad JSON, missing fields, too many steps, an internal error).'),
    raw: z.string().describe('The record as read (or the raw line), cut at 65,536 characters.'),
    raw_truncated: z.boolean().describe('True when `raw` was cut.'),
  })
  .describe('One row per record that left without a verdict, with its reason: nothing read is lost.');
export type DeadLetterRow = z.infer<typeof DeadLetterRow>;

/**
 * The curated corpus (corpus/decision=<d>/source=<name>/part-*.parquet, docs/layout.md): one row
 * per judged input record. These are its curation columns; the last column, `record`, is the
 * input record as it was read and is not a fixed type: a Struct of the input's own columns and
 * types for Parquet input, the record's JSON text (Utf8) for JSON input (JSONL, Kafka).
 */
export const CorpusRow = z
  .object({
    record_id: z.string().min(1).describe('The record\'s id, as in every other table.'),
    /** Also the Hive partition value (decision=<d>): plain Utf8, like `source`. */
    decision: FilterDecision.meta({ arrow: 'utf8' }).describe('keep, drop or review, as in the decisions table; also the `decision=` Hive partition (plain Utf8, like `source`).'),
    rule: dictString().nullable().describe('Name of the filter rule that decided (`rule <n>` when unnamed); null when no rule matched and the policy\'s `default` decided.'),
    reason: z.string().describe('The decisions table\'s reason: the rule and what it saw.'),
    n_steps: int32().nonnegative().describe('Steps of the trace as the jury read it.'),
    flagged_steps: int32().nonnegative().describe('Steps labelled erroneous (a defect at or above `severity_threshold`).'),
    n_neutral: int32().nonnegative().describe('Consensus defects of severity neutral.'),
    n_minor: int32().nonnegative().describe('Consensus defects of severity minor.'),
    n_major: int32().nonnegative().describe('Consensus defects of severity major.'),
    n_fatal: int32().nonnegative().describe('Consensus defects of severity fatal.'),
    fatal_step_rate: rate.describe('Share of the steps whose worst defect is fatal, 0..1.'),
    top_categories: z.array(z.string()).describe('Up to three taxonomy categories by defect count (ties by id); empty without the taxonomy step.'),
    source: z.string().describe('Connector the record came from (file, s3, kafka, stdin); also the `source=` Hive partition.'),
    source_unit: dictString().describe('Unit of the source the record was read from (file, object, or Kafka topic and partition).'),
    source_offset: int64().nonnegative().describe('Position of the record inside its unit (line or row number, or Kafka offset).'),
  })
  .describe('One row per judged input record: the record as it was read (`record`, every field) with its decision, the rule that fired and a compact defect summary, so the kept traces need no join back to the input. Dead letters are not in it (they have no decision); corpus rows plus dead letters are the records read.');
export type CorpusRow = z.infer<typeof CorpusRow>;

/**
 * The corpus's last column, after CorpusRow's: the input record as it was read. Its type follows
 * the input, so it has no zod schema; this is its entry in the data contract (docs/tables.md).
 */
export const CORPUS_RECORD_COLUMN = {
  name: 'record',
  nullable: false,
  type: 'Struct of the input\'s columns (Parquet input) or Utf8 (JSON input)',
  meaning:
    'The input record as it was read, every field. Parquet input (local or S3): a Struct of the input file\'s own columns with their own types (types without a mapping, e.g. DECIMAL or MAP, as Utf8 JSON text). ' +
    'JSON input (JSONL, `.json`, Kafka): Utf8, the record\'s JSON text. With `output.corpus.format: jsonl` (files under `jsonl/corpus/`): a nested JSON object. ' +
    'Nested, so an input field named like one of the columns above or a partition key cannot collide with it.',
} as const;

// ---- verdict_details: what the audit log alone kept (paper App. E), as nested columns ----

const DetailDefect = z
  .object({
    statement_refs: z.array(int32().positive()).describe('Steps the defect cites, 1-based.'),
    impact: Impact.describe('Severity: neutral, minor, major or fatal.'),
    what_went_wrong: z.string().describe('What is wrong at those steps, in the juror\'s words.'),
    evidence: z.string().describe('The part of the trace that shows it.'),
    correct_value: z.string().nullable().describe('What the step should have said, when given; else null.'),
  })
  .describe('One defect as a Phase 1 juror reported it.');

export const PHASE1_STATUSES = ['ok', 'failed'] as const;

const Phase1Row = z
  .object({
    seat_id: z.string().describe('The juror\'s seat id (`jurors[].id`).'),
    model: z.string().describe('Model that sat in the seat.'),
    status: z.enum(PHASE1_STATUSES).describe('`ok` when the judgement succeeded, `failed` when the juror gave none (see `error`).'),
    error: z.string().nullable().describe('Why the juror failed; null when `status` is ok.'),
    dropped_refs: int32().nonnegative().describe('Step references an external juror\'s file cited that are not steps of the trace (dropped). Always 0 for a model juror: a reply citing such a step is re-asked once, and then fails the juror.'),
    defects: z.array(DetailDefect).describe('The juror\'s own defects, before any aggregation (empty when it found none or failed).'),
  })
  .describe('One Phase 1 judgement.');

const TurnRow = z
  .object({
    turn: int32().nonnegative().describe('Turn number in the deliberation, in speaking order.'),
    round: int32().nonnegative().describe('Round the turn belongs to.'),
    speaker: z.string().describe('Seat id of the juror who spoke.'),
    instruction: z.string().nullable().describe('The moderator\'s instruction for the turn; null when it gave none.'),
    content: z.string().describe('What the juror said.'),
  })
  .describe('One turn of the deliberation.');

const CallRow = z
  .object({
    phase: Phase.describe('What the call served: phase1, consolidation, moderator, juror_turn, extraction, removal (the removal pass), arbiter (the evidence arbiter) or grounding (the deliberation grounding checker).'),
    participant: z.string().describe('Seat that made the call (a juror id, consolidator, moderator...).'),
    model: z.string().describe('Model called.'),
    tokens_in: int64().nonnegative().describe('Prompt tokens.'),
    tokens_out: int64().nonnegative().describe('Completion tokens.'),
    cost_usd: z.number().nonnegative().nullable().describe('USD cost at the configured `prices`; null when the model has no price (unknown, not free).'),
    latency_ms: z.number().nonnegative().describe('Wall-clock time of the call, retries included.'),
    attempts: int32().positive().describe('Attempts the call took (1 = no retry).'),
    outcome: CallUsage.shape.outcome.describe('`ok`, or `error` when the call failed after its retries.'),
  })
  .describe('One logical model call of the jury (after retries).');

const PassDefect = DetailDefect.extend({
  vote_count: int32().nonnegative().nullable().describe('Jurors who backed the defect; null where the mode records no votes.'),
  voters: z.array(z.string()).describe('Seat ids of those jurors (empty where the mode records none).'),
}).describe('One defect as the verification pass saw it.');

const DroppedRow = z
  .object({
    defect: PassDefect,
    reason: z.string().describe('Why the removal pass found the trace does not support it.'),
  })
  .describe('One consensus defect the removal pass dropped.');

const AdjudicationRow = z
  .object({
    defect: PassDefect,
    origin: z.enum(ADJUDICATION_SOURCES).describe('`split_vote`: a consensus defect fewer jurors backed than succeeded; `dissent`: a Phase 1 finding the consensus left out.'),
    ruling: z.enum(ARBITER_RULINGS).describe('`upheld`: in the verdict (a dissenting finding joins it); `rejected`: out of it (a split-vote defect leaves it).'),
    rationale: z.string().describe('The arbiter\'s reason, from the trace.'),
  })
  .describe('One ruling of the evidence arbiter.');

const GroundingRow = z
  .object({
    defect_index: int32().nonnegative().describe('The defect\'s position in the consensus before grounding (0-based); dissenting findings the arbiter upheld follow, numbered on from the consensus\'s last.'),
    cited_refs: z.string().describe('The steps it cited, comma-separated ("3,4").'),
    evidence: z.string().describe('Its evidence text, whose quotes were looked up.'),
    status: z.enum(GROUNDING_STATUSES).describe('`grounded`: a quote sits in a cited step; `relocated`: its quotes sit only in other steps (refs corrected); `ungrounded`: no quote found in the trace.'),
    outcome: z.enum(GROUNDING_ACTIONS).describe('What `grounding.policy` did with it: `kept`, `flagged` (kept, verdict marked degraded) or `dropped`.'),
    quotes: int32().nonnegative().describe('Quotes found in its evidence.'),
    quotes_found: int32().nonnegative().describe('Of those, the ones found in some step.'),
    best_match: z.enum(QUOTE_MATCHES).describe('Best match: `exact` (after normalisation), `fuzzy` (within the edit threshold) or `none`.'),
    corrected_refs: z.string().nullable().describe('The corrected steps ("5") when relocated; null otherwise.'),
    impact: Impact.nullable().describe('The defect\'s severity (kept so that `eval` can score the run without grounding); null in verdicts written before it was recorded.'),
  })
  .describe('One consensus defect as deterministic grounding found it.');

const VoterCorrectionRow = z
  .object({
    defect_index: int32().nonnegative().describe('The defect\'s position in the consensus before grounding (0-based).'),
    voters_before: z.string().describe('Voters the consensus gave, comma-separated.'),
    voters_after: z.string().describe('Jurors whose Phase 1 findings back the defect, comma-separated.'),
    vote_count_before: int32().nonnegative().nullable().describe('`vote_count` the consensus gave; null when it gave none.'),
    vote_count_after: int32().nonnegative().describe('The corrected vote count.'),
  })
  .describe('One corrected `voters` / `vote_count`.');

const ClaimCheckRow = z
  .object({
    turn: int32().nonnegative().describe('Turn in which the claim was made.'),
    speaker: z.string().describe('Seat id of the juror who made it.'),
    refs: z.string().describe('Steps the claim cites, comma-separated.'),
    quoted: z.string().describe('The quotes it was checked by (empty when it gave none).'),
    decided_by: z.enum(['deterministic', 'model', 'failure']).describe('What decided: quote matching, the checker call, or the call\'s failure.'),
    result: z.enum(CLAIM_CHECK_RESULTS).describe('`grounded` (counted as evidence), `ungrounded` (named to the moderator as not evidence) or `accepted_on_failure` (the check failed; the claim counts).'),
    error: z.string().nullable().describe('Why the checker call failed; null otherwise.'),
  })
  .describe('One new deliberation claim as the grounding checker saw it.');

export const VerdictDetailRow = z
  .object({
    record_id: z.string().min(1).describe('The record the verdict is for; one row per verdict.'),
    mode: JuryMode.describe('Jury mode that formed the verdict.'),
    termination_reason: TerminationReason.describe('How Phase 2 ended (as in `verdicts`).'),
    rounds: int32().nonnegative().describe('Deliberation rounds held.'),
    turns: int32().nonnegative().describe('Juror turns spoken in the deliberation (entries of `transcript`).'),
    last_speaker: z.string().nullable().describe('Seat id of the last juror to speak; null when nobody deliberated.'),
    dropped_refs: int32().nonnegative().describe('Out-of-range step references dropped from the final defects (from external jurors\' files; a model reply citing a step outside the trace is re-asked, then fails).'),
    phase1: z.array(Phase1Row).describe('The independent Phase 1 judgement of every juror called (mode single calls only the first), in seat order.'),
    dissenting_views: z.array(z.string()).describe('Findings raised by some juror that did not make the verdict, one sentence each.'),
    transcript: z.array(TurnRow).describe('The deliberation in speaking order (empty outside deliberation or when it was skipped).'),
    calls: z.array(CallRow).describe('Every model call the jury made for the record (not taxonomy assignment).'),
    dropped_negatives: z.array(DroppedRow).nullable().describe('Defects the removal pass (`removal_pass`) took out of the verdict, with its reasons; null when the pass is off or failed (`degraded_reason` of `verdicts` says which).'),
    negative_adjudications: z.array(AdjudicationRow).nullable().describe('Rulings of the evidence arbiter (`arbiter`) on the contested findings; null when it is off or failed.'),
    grounding: z.array(GroundingRow).nullable().describe('Deterministic grounding of each consensus defect (`grounding`, docs/grounding.md); null when grounding is off.'),
    voter_corrections: z.array(VoterCorrectionRow).nullable().describe('Consensus defects whose `voters` / `vote_count` grounding corrected; null when grounding is off.'),
    claim_checks: z.array(ClaimCheckRow).nullable().describe('The deliberation grounding checker\'s look at each new claim (`grounding.checker`); null when it is off or outside deliberation.'),
  })
  .describe('One row per verdict, written when `verdict_details` is on (default: deliberation mode, or a verification pass on): the Phase 1 judgements, the transcript, the dissent, how Phase 2 ended and what the verification passes removed and ruled, as nested lists of structs (DuckDB: `unnest`).');
export type VerdictDetailRow = z.infer<typeof VerdictDetailRow>;

/** What a human reviewer can decide for a record (`review` is what they resolve, so not an answer). */
export const REVIEW_DECISIONS = ['keep', 'drop'] as const;

export const ReviewRow = z
  .object({
    record_id: z.string().min(1).describe('The record reviewed (as in every other table).'),
    decision: z.enum(REVIEW_DECISIONS).describe('The reviewer\'s decision, keep or drop: `decide` and the corpus take it over the policy\'s, with reason `review:<reviewer>`.'),
    reviewer: z.string().min(1).describe('Who reviewed (the `--reviewer` of `view` or `review`, default the login name).'),
    reviewed_at: z.string().describe('When, as UTC ISO-8601 text; of several reviews of one record the latest counts (ties: the later commit).'),
    note: z.string().nullable().describe('The reviewer\'s note; null when none was given.'),
  })
  .describe('One row per human review, append-only under `reviews/` of the reviewed output (its own commit manifests in `reviews/_commits/`, docs/viewer.md): written by `view`, `review` and `review import`, read by `decide`.');
export type ReviewRow = z.infer<typeof ReviewRow>;

/** Table name -> row schema; the name is also the folder under out/. */
export const SHARD_TABLES = {
  verdicts: VerdictRow,
  defects: DefectRow,
  steps: StepRow,
  decisions: DecisionRow,
  verdict_details: VerdictDetailRow,
  dead_letters: DeadLetterRow,
  // Written only when `repair` is on (no zero-row parts otherwise), so existing outputs keep their bytes.
  repairs: RepairRow,
  // Committed only under reviews/ by the review commands (src/pipeline/commit/reviews.ts), never in a run's range.
  reviews: ReviewRow,
} as const;
export type ShardTableName = keyof typeof SHARD_TABLES;
export const SHARD_TABLE_NAMES = Object.keys(SHARD_TABLES) as ShardTableName[];
export const ShardTableName = z.enum(SHARD_TABLE_NAMES as [ShardTableName, ...ShardTableName[]]);
export type ShardRowOf<T extends ShardTableName> = z.infer<(typeof SHARD_TABLES)[T]>;

/** "<record_id>#d<ordinal>": ordinal is the defect's index in the final verdict. */
export function defectId(recordId: string, ordinal: number): string {
  return `${recordId}#d${ordinal}`;
}

/** Caps a dead letter's raw text at maxChars without splitting a surrogate pair. */
export function truncateRaw(raw: string, maxChars = 65_536): { raw: string; raw_truncated: boolean } {
  if (raw.length <= maxChars) return { raw, raw_truncated: false };
  let end = maxChars;
  const c = raw.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end -= 1; // high surrogate would be orphaned
  return { raw: raw.slice(0, end), raw_truncated: true };
}

// ---- Commit manifest: out/_commits/<first>-<last>.json, written last ----

/** Formats of the shard tables (`--format`). */
export const SHARD_FORMATS = ['parquet', 'arrow'] as const;
export const ShardFormat = z.enum(SHARD_FORMATS);
export type ShardFormat = z.infer<typeof ShardFormat>;

/** Formats of the curated corpus (`output.corpus.format`). */
export const CORPUS_FORMATS = ['parquet', 'jsonl'] as const;
export const CorpusFormat = z.enum(CORPUS_FORMATS);
export type CorpusFormat = z.infer<typeof CorpusFormat>;

/** Every format a part file can have; each lives under its own root (src/pipeline/commit/layout.ts). */
export const FileFormat = z.enum(['parquet', 'arrow', 'jsonl']);
export type FileFormat = z.infer<typeof FileFormat>;

/** Tables a manifest lists: the shard tables and the corpus. */
export const MANIFEST_TABLE_NAMES = [...SHARD_TABLE_NAMES, 'corpus'] as const;
export const ManifestTableName = z.enum(MANIFEST_TABLE_NAMES as unknown as [ShardTableName | 'corpus', ...(ShardTableName | 'corpus')[]]);
export type ManifestTableName = z.infer<typeof ManifestTableName>;

export const ShardFileEntry = z.object({
  key: z.string(),
  table: ManifestTableName,
  format: FileFormat,
  rows: z.int().nonnegative(),
  bytes: z.int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type ShardFileEntry = z.infer<typeof ShardFileEntry>;

/** Which records of which source unit a range holds. */
export const ManifestRange = z.object({
  unit: z.string(),
  unit_token: z.string(),
  first_offset: z.int().nonnegative(),
  last_offset: z.int().nonnegative(),
  records: z.int().nonnegative(),
  /**
   * sha256 over each record's offset and digest (the line's bytes for JSONL, the row's JSON for
   * Parquet), in offset order: what the range was judged from. A later run that reads other
   * content at these offsets knows the input changed (`input.on_changed_input`).
   */
  content_sha256: z.string().regex(/^[0-9a-f]{64}$/).optional(),
  /**
   * Summed usage of the range's verdicts and `repairs` rows (retries and their re-judging):
   * tokens_in, tokens_out, cost_usd of priced calls; what `budget_usd` / `budget_tokens` count a
   * resumed run's earlier spend from. Absent in older manifests; older manifests of runs with repair on sum the verdicts only.
   */
  usage: z.object({ tokens_in: z.int().nonnegative(), tokens_out: z.int().nonnegative(), cost_usd: z.number().nonnegative() }).optional(),
  /** later copies of a record_id dropped unjudged under `input.duplicate_ids: keep_first` */
  duplicates: z.array(z.object({ offset: z.int().nonnegative(), record_id: z.string(), first_seen: z.string() })).optional(),
});
export type ManifestRange = z.infer<typeof ManifestRange>;

/**
 * The settings range boundaries and file names depend on. Resuming with other values would
 * plan different ranges under different names, so a run checks them against the output's.
 */
export const RangeSettings = z.object({
  max_records: z.int().positive(),
  max_chars: z.int().positive(),
  formats: z.array(ShardFormat).min(1),
  /** the corpus format, or 'off'; absent in manifests written before the corpus existed */
  corpus: z.enum([...CORPUS_FORMATS, 'off']).optional(),
});
export type RangeSettings = z.infer<typeof RangeSettings>;

export const CommitManifest = z.object({
  version: z.literal(1),
  source: z.string(),
  first: z.string(),
  last: z.string(),
  committed_at: z.string(),
  files: z.array(ShardFileEntry),
  /** rows per table in this range (same for every format of that table; corpus: all decisions). */
  rows: z.partialRecord(ManifestTableName, z.int().nonnegative()),
  /** distinct record ids across the range's tables (dead letters have none). */
  record_ids: z.int().nonnegative(),
  /** sha256 over "key sha256\n" of every file, in key order: one value to compare ranges by. */
  checksum: z.string().regex(/^[0-9a-f]{64}$/),
  /** the range's unit and offsets (absent only in manifests written before it existed) */
  range: ManifestRange.optional(),
  settings: RangeSettings.optional(),
  /**
   * Where the parts were staged before they were moved to their keys. While objects remain
   * under it the range is committed but not yet fully published; the next commit of the range,
   * or ShardCommitter.recover at a run's start, finishes moving them.
   */
  staging: z.string().optional(),
  /** opaque to the stage: facts a caller wants kept with the range; older manifests held `range` here. */
  extra: z.record(z.string(), z.unknown()).optional(),
  /**
   * sha256 over every other field (src/pipeline/commit/checksum.ts, manifestSeal): `shards verify`
   * reports a manifest whose fields were edited. Absent in manifests written before it existed.
   */
  seal: z.string().regex(/^[0-9a-f]{64}$/).optional(),
});
export type CommitManifest = z.infer<typeof CommitManifest>;
