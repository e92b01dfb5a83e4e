import { z } from 'zod';
import { Impact, ModelDefect } from '../../../schemas/defect.js';

/**
 * What the moderator and the extraction call must return. Lenient at the edge like
 * JudgementOutput: models write numbers as strings, single refs without a list, severities in
 * capitals, or a prose termination reason; all of that is normalised here so a usable reply
 * does not cost a re-ask.
 */

const text = z.preprocess((v) => (v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v)), z.string());
const optionalText = z.preprocess(
  (v) => (v === undefined ? undefined : v === null ? null : typeof v === 'string' ? v : JSON.stringify(v)),
  z.string().nullable().optional(),
);
const idList = z.preprocess(
  (v) => (Array.isArray(v) ? v : v === undefined || v === null || v === '' ? [] : [v]),
  z.array(z.union([z.string(), z.number()]).transform(String)),
);
const count = z.preprocess((v) => (typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : v), z.int().nonnegative());
const impact = z.preprocess((v) => (typeof v === 'string' ? v.trim().toLowerCase() : v), Impact);

export const ConsensusItem = z.object({
  consensus_id: z.preprocess((v) => (typeof v === 'number' ? `C${v}` : v), z.string()),
  what_went_wrong: z.string().min(1),
  source_ref: idList,
  best_source: optionalText,
  statement_refs: idList,
  judge_count: count.optional(),
  impact,
  evidence: text,
  correct_value: optionalText,
  contested_by: idList.optional(),
});
export type ConsensusItem = z.infer<typeof ConsensusItem>;

export const ConsensusState = z.object({ consensus_map: z.preprocess((v) => (v === null || v === undefined ? [] : v), z.array(ConsensusItem)) });
export type ConsensusState = z.infer<typeof ConsensusState>;

export const EMPTY_STATE: ConsensusState = { consensus_map: [] };

/** The three endings a moderator may call; the turn cap and errors are the loop's own. */
export const MODERATOR_ENDINGS = ['no_new_arguments', 'universal_agreement', 'cycling'] as const;
export type ModeratorEnding = (typeof MODERATOR_ENDINGS)[number];

/** "Universal agreement", "cycling detected", "no new arguments in a full round" -> the enum. */
export function readEnding(v: unknown): ModeratorEnding | null {
  if (typeof v !== 'string') return null;
  const s = v.toLowerCase().replace(/[\s-]+/g, '_');
  if (s === '' || s === 'null' || s === 'none') return null;
  if (/agree|consensus|unanim/.test(s)) return 'universal_agreement';
  if (/cycl|circl|repeat|loop/.test(s)) return 'cycling';
  if (/new|round|exhaust|stall|substant/.test(s)) return 'no_new_arguments';
  return null;
}

const bool = z.preprocess((v) => (typeof v === 'string' ? /^\s*(true|yes)\s*$/i.test(v) : v), z.boolean());

export const ModeratorDecision = z.object({
  should_terminate: bool,
  termination_reason: z.preprocess(readEnding, z.enum(MODERATOR_ENDINGS).nullable()),
  next_speaker: optionalText,
  instruction: optionalText,
  reasoning: optionalText,
  consensus_state: z.preprocess((v) => (v === null || v === undefined ? EMPTY_STATE : v), ConsensusState),
});
export type ModeratorDecision = z.infer<typeof ModeratorDecision>;

export const ExtractedDefect = ModelDefect.extend({
  basis: z.preprocess((v) => (typeof v === 'string' ? v.trim().toLowerCase() : v), z.enum(['majority', 'uncontested'])).optional(),
});
export type ExtractedDefect = z.infer<typeof ExtractedDefect>;

/** 0.8, "0.8" and 80 (a percentage) all mean 0.8. */
const unit = z.preprocess((v) => {
  const n = typeof v === 'string' ? Number(v.replace('%', '')) : v;
  return typeof n === 'number' && n > 1 && n <= 100 ? n / 100 : n;
}, z.number().min(0).max(1));

const view = z.preprocess((v) => (typeof v === 'string' ? v : JSON.stringify(v)), z.string());

export const ExtractionOutput = z.object({
  consensus_defects: z.array(ExtractedDefect),
  confidence: unit,
  dissenting_views: z.preprocess((v) => (v === null || v === undefined ? [] : v), z.array(view)),
  termination_reason: optionalText,
  rounds: count.optional(),
});
export type ExtractionOutput = z.infer<typeof ExtractionOutput>;
