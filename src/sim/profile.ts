import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ReasoningJuryError } from '../util/errors.js';
import { BatchBehaviour } from './batch-profile.js';

/**
 * Simulator profile: how each simulated model behaves. A file holds a top-level `seed` and
 * `models`, keyed by model name; the entry named `default` serves unknown model names and is
 * also the base every named entry is merged over (field by field), so a file only states
 * what differs. Without a `default` entry unknown models get HTTP 404, which surfaces typos.
 */

const prob = z.number().min(0).max(1);

export const SeverityMix = z
  .object({
    neutral: z.number().nonnegative().default(0),
    minor: z.number().nonnegative().default(0),
    major: z.number().nonnegative().default(0),
    fatal: z.number().nonnegative().default(0),
  })
  .strict()
  .refine((m) => m.neutral + m.minor + m.major + m.fatal > 0, 'at least one severity needs a positive weight');
export type SeverityMix = z.infer<typeof SeverityMix>;

/** 0 = answer at once; otherwise lognormal: median * exp(sigma * N(0,1)), capped at `max`. */
export const Latency = z.union([
  z.literal(0),
  z.object({ median: z.number().nonnegative(), sigma: z.number().nonnegative().default(0.4), max: z.number().positive().optional() }).strict(),
]);
export type Latency = z.infer<typeof Latency>;

/** How a model behaves when it serves as the consolidator (App. C.1). */
export const ConsolidatorBehaviour = z
  .object({
    /** probability to adopt a candidate group that cites a gold-error step */
    accept_true: prob,
    /** probability to adopt a candidate group that cites only clean steps */
    accept_false: prob,
    /** probability to add a gold-error step that no juror cited */
    fill_recall: prob,
    /** probability to add a clean step that no juror cited (the consolidator's own false positives) */
    fill_false_positive_rate: prob,
  })
  .strict();
export type ConsolidatorBehaviour = z.infer<typeof ConsolidatorBehaviour>;

/**
 * How a model behaves in deliberation (src/sim/deliberation-*.ts): as a juror taking turns, as
 * the moderator and as the extraction call. A "finding" is true when it cites a gold-error step.
 */
export const DeliberationBehaviour = z
  .object({
    /** weighing in on another juror's finding: endorse it (else dispute it), for true / false findings */
    endorse_true: prob,
    endorse_false: prob,
    /** answering a dispute of one's own finding: concede it (else maintain it), for true / false findings */
    concede_true: prob,
    concede_false: prob,
    /** per turn: raise a gold-error step nobody has cited yet */
    new_defect_rate: prob,
    /** per turn after the first: repeat one's previous message word for word (cycling) */
    repeat_rate: prob,
    /** with nothing new to say: re-argue an open dispute in fresh words instead (drags on to the turn cap) */
    restate_rate: prob,
    /** with no dispute left open: say the agree-on-everything phrase (else the nothing-new phrase) */
    agree_all_rate: prob,
    /** per turn: reply with nothing at all (a failed turn) */
    turn_fail_rate: prob,
    points_per_turn: z.int().positive(),
    words_per_point: z.int().positive(),
    /** as moderator: call an ending when one is due (false: never, so limits and backstops decide) */
    terminate: z.boolean(),
    /** as moderator: reply with broken JSON (a re-ask draws again) */
    moderator_fail_rate: prob,
    /** as moderator: name a speaker who is not on the panel */
    invalid_speaker_rate: prob,
    /** as extraction: reply with broken JSON (a re-ask draws again) */
    extraction_fail_rate: prob,
  })
  .strict();
export type DeliberationBehaviour = z.infer<typeof DeliberationBehaviour>;

/** How a model behaves as the removal pass (src/sim/pass-tasks.ts); a finding is true when it cites a gold-error step. */
export const RemovalBehaviour = z
  .object({
    /** probability to keep a true finding (1 - this: real flaws the pass drops) */
    keep_true: prob,
    /** probability to drop a false finding (the pass's accuracy on unsupported ones) */
    drop_false: prob,
    /** reply with broken JSON (a re-ask draws again) */
    fail_rate: prob,
  })
  .strict();
export type RemovalBehaviour = z.infer<typeof RemovalBehaviour>;

/** How a model behaves as the evidence arbiter (src/sim/pass-tasks.ts). */
export const ArbiterBehaviour = z
  .object({
    /** probability to uphold a true contested finding */
    uphold_true: prob,
    /** probability to reject a false contested finding */
    reject_false: prob,
    /** reply with broken JSON (a re-ask draws again) */
    fail_rate: prob,
  })
  .strict();
export type ArbiterBehaviour = z.infer<typeof ArbiterBehaviour>;

/** How a model behaves as the deliberation grounding checker (src/sim/pass-tasks.ts); a claim is grounded when one of its quotes is in a step it cites. */
export const GroundingCheckerBehaviour = z
  .object({
    /** probability to call a grounded claim grounded */
    accept_true: prob,
    /** probability to call an ungrounded claim ungrounded */
    reject_false: prob,
    /** reply with broken JSON (a re-ask draws again) */
    fail_rate: prob,
  })
  .strict();
export type GroundingCheckerBehaviour = z.infer<typeof GroundingCheckerBehaviour>;

/** A condition's rates as the generator of defect-guided repair (src/sim/repair-task.ts). */
const RepairRates = z
  .object({
    /** probability that a retry of a wrong original answer ends with the reference answer */
    fix_rate: prob,
    /** probability that a retry of a right original answer ends with a wrong one */
    regress_rate: prob,
  })
  .strict();

/** How a model behaves as the generator of defect-guided repair, per feedback condition. */
export const GeneratorBehaviour = z
  .object({
    steps: RepairRates,
    full: RepairRates,
    /** words of reasoning written before the ANSWER line */
    words: z.int().nonnegative(),
  })
  .strict();
export type GeneratorBehaviour = z.infer<typeof GeneratorBehaviour>;

const modelShape = {
  /** probability of flagging each gold-error step */
  recall: prob,
  /** probability of flagging each clean step */
  false_positive_rate: prob,
  /**
   * correlated misses: on each gold-error step, with this probability the juror uses a draw
   * shared by every juror on the record instead of its own, so jurors tend to miss the same
   * steps; absent or 0: independent jurors (the stream of draws is then unchanged)
   */
  miss_correlation: prob.optional(),
  /** severities of true finds */
  severity_mix: SeverityMix,
  /** severities of false positives; severity_mix when absent */
  fp_severity_mix: SeverityMix.optional(),
  /** probability that two flagged neighbouring steps are reported as one defect citing both */
  adjacent_rate: prob,
  /** probability that a finding also cites a step past the end of the trace (models do) */
  rate_bad_ref: prob,
  latency_ms: Latency,
  /** in-flight requests per model above which the server answers 429; unlimited when absent */
  max_concurrency: z.int().positive().optional(),
  /** advertised in retry-after(-ms) on every 429 */
  retry_after_ms: z.int().nonnegative(),
  rate_429: prob,
  rate_500: prob,
  /** the request hangs: until the client gives up, or for hang_ms then HTTP 504 */
  rate_timeout: prob,
  hang_ms: z.int().positive().optional(),
  /** broken JSON; the share `malformed_repairable` is fixable by jsonrepair, the rest is not */
  rate_malformed_json: prob,
  malformed_repairable: prob,
  rate_fenced_json: prob,
  rate_prose_json: prob,
  /** valid JSON of the wrong shape (impact "severe", missing what_went_wrong, wrong key) */
  rate_schema_invalid: prob,
  words_per_defect: z.int().positive(),
  /** share of a juror's Phase 1 findings that are invented: on a clean step, with a quote that is not in the trace (src/sim/text.ts inventedQuote); in deliberation, also the chance per turn of raising such a claim */
  invent_rate: z.number().min(0).max(0.9),
  /** words of reasoning_content per reply; 0 = none */
  reasoning_words: z.int().nonnegative(),
  consolidator: ConsolidatorBehaviour,
  deliberation: DeliberationBehaviour,
  removal: RemovalBehaviour,
  arbiter: ArbiterBehaviour,
  grounding_checker: GroundingCheckerBehaviour,
  generator: GeneratorBehaviour,
};

export const ModelProfile = z
  .object(modelShape)
  .strict()
  .superRefine((m, ctx) => {
    const faults = m.rate_429 + m.rate_500 + m.rate_timeout;
    if (faults > 1) ctx.addIssue({ code: 'custom', path: ['rate_429'], message: `rate_429 + rate_500 + rate_timeout is ${faults}, above 1` });
    const formats = m.rate_malformed_json + m.rate_schema_invalid + m.rate_fenced_json + m.rate_prose_json;
    if (formats > 1) ctx.addIssue({ code: 'custom', path: ['rate_malformed_json'], message: `the four format rates sum to ${formats}, above 1` });
  });
export type ModelProfile = z.infer<typeof ModelProfile>;

/** What a file may say about one model: any subset of the fields. */
export const ModelEntry = z
  .object({ ...modelShape, consolidator: ConsolidatorBehaviour.partial(), deliberation: DeliberationBehaviour.partial(), removal: RemovalBehaviour.partial(), arbiter: ArbiterBehaviour.partial(), grounding_checker: GroundingCheckerBehaviour.partial(), generator: z.object({ steps: RepairRates.partial(), full: RepairRates.partial(), words: z.int().nonnegative() }).partial().strict() })
  .partial()
  .strict();
export type ModelEntry = z.infer<typeof ModelEntry>;
export type ModelEntryInput = z.input<typeof ModelEntry>;

export const ProfileFile = z
  .object({
    seed: z.int().default(0),
    models: z.record(z.string().min(1), ModelEntry).default({}),
    batch: BatchBehaviour.prefault({}).describe('how the simulated OpenAI Batch API behaves (src/sim/batch-profile.ts)'),
  })
  .strict();
export type ProfileFileInput = z.input<typeof ProfileFile>;

/** Values for fields neither the entry nor the file's `default` sets: a clean, instant model. */
export const BASE_MODEL: ModelProfile = {
  recall: 0.6,
  false_positive_rate: 0.03,
  severity_mix: { neutral: 0.02, minor: 0.13, major: 0.5, fatal: 0.35 },
  adjacent_rate: 0.2,
  rate_bad_ref: 0,
  latency_ms: 0,
  retry_after_ms: 100,
  rate_429: 0,
  rate_500: 0,
  rate_timeout: 0,
  rate_malformed_json: 0,
  malformed_repairable: 0.5,
  rate_fenced_json: 0,
  rate_prose_json: 0,
  rate_schema_invalid: 0,
  words_per_defect: 45,
  invent_rate: 0,
  reasoning_words: 0,
  consolidator: { accept_true: 0.9, accept_false: 0.25, fill_recall: 0.3, fill_false_positive_rate: 0 },
  deliberation: {
    endorse_true: 0.8,
    endorse_false: 0.2,
    concede_true: 0.05,
    concede_false: 0.6,
    new_defect_rate: 0.1,
    repeat_rate: 0,
    restate_rate: 0,
    agree_all_rate: 0.5,
    turn_fail_rate: 0,
    points_per_turn: 6,
    words_per_point: 40,
    terminate: true,
    moderator_fail_rate: 0,
    invalid_speaker_rate: 0,
    extraction_fail_rate: 0,
  },
  removal: { keep_true: 0.97, drop_false: 0.5, fail_rate: 0 },
  arbiter: { uphold_true: 0.85, reject_false: 0.7, fail_rate: 0 },
  grounding_checker: { accept_true: 0.95, reject_false: 0.8, fail_rate: 0 },
  // the paper's observed rates (App. N.3, Table 13): anchors fix 39.2 %, rich feedback 48.7 %
  generator: { steps: { fix_rate: 0.392, regress_rate: 0.053 }, full: { fix_rate: 0.487, regress_rate: 0.036 }, words: 60 },
};

export interface SimProfile {
  seed: number;
  /** fully resolved profiles of the named models (not including `default`) */
  models: Record<string, ModelProfile>;
  /** profile for model names not listed; null = unknown models are rejected */
  default: ModelProfile | null;
  /** the Batch API's behaviour; the defaults (src/sim/batch-profile.ts) when absent */
  batch?: BatchBehaviour;
}

export class ProfileError extends ReasoningJuryError {
  override get kind() {
    return 'internal' as const;
  }
}

function resolve(name: string, ...layers: (ModelEntry | undefined)[]): ModelProfile {
  let merged: Record<string, unknown> = { ...BASE_MODEL };
  for (const l of layers) {
    if (!l) continue;
    const consolidator = { ...(merged.consolidator as object), ...(l.consolidator ?? {}) };
    const deliberation = { ...(merged.deliberation as object), ...(l.deliberation ?? {}) };
    const removal = { ...(merged.removal as object), ...(l.removal ?? {}) };
    const arbiter = { ...(merged.arbiter as object), ...(l.arbiter ?? {}) };
    const grounding_checker = { ...(merged.grounding_checker as object), ...(l.grounding_checker ?? {}) };
    const g = merged.generator as GeneratorBehaviour;
    const generator = { ...g, ...(l.generator ?? {}), steps: { ...g.steps, ...(l.generator?.steps ?? {}) }, full: { ...g.full, ...(l.generator?.full ?? {}) } };
    merged = { ...merged, ...l, consolidator, deliberation, removal, arbiter, grounding_checker, generator };
  }
  const r = ModelProfile.safeParse(merged);
  if (!r.success) throw new ProfileError(`profile for model "${name}": ${z.prettifyError(r.error)}`);
  return r.data;
}

/** Validate and resolve a profile from its parsed file contents (YAML or JSON object). */
export function parseProfile(raw: unknown): SimProfile {
  const r = ProfileFile.safeParse(raw);
  if (!r.success) throw new ProfileError(`invalid simulator profile:\n${z.prettifyError(r.error)}`);
  const { seed, models, batch } = r.data;
  const base = models.default;
  const out: SimProfile = { seed, models: {}, default: base ? resolve('default', base) : null, batch };
  for (const [name, entry] of Object.entries(models)) {
    if (name !== 'default') out.models[name] = resolve(name, base, entry);
  }
  return out;
}

/** Load a profile file; YAML is a superset of JSON, so one parser reads both. */
export function loadProfileFile(path: string): SimProfile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ProfileError(`cannot read simulator profile ${path}: ${(e as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (e) {
    throw new ProfileError(`simulator profile ${path} is not valid YAML/JSON: ${(e as Error).message}`);
  }
  try {
    return parseProfile(raw ?? {});
  } catch (e) {
    throw new ProfileError(`${path}: ${(e as Error).message}`);
  }
}

/** The behaviour of `model`, or null when the profile neither lists it nor has a default. */
export function modelProfile(profile: SimProfile, model: string): ModelProfile | null {
  return Object.hasOwn(profile.models, model) ? profile.models[model]! : profile.default;
}

/** Model ids the simulator advertises on GET /v1/models. */
export function listedModels(profile: SimProfile): string[] {
  return Object.keys(profile.models).sort();
}

function mapModels(p: SimProfile, f: (m: ModelProfile) => ModelProfile): SimProfile {
  const models: Record<string, ModelProfile> = {};
  for (const [k, v] of Object.entries(p.models)) models[k] = f(v);
  return { seed: p.seed, models, default: p.default ? f(p.default) : null, ...(p.batch ? { batch: p.batch } : {}) };
}

/** Same judgements, but no HTTP faults and always well-formed JSON (for tests that need clean runs). */
export function withoutFaults(p: SimProfile): SimProfile {
  return mapModels(p, (m) => ({
    ...m,
    rate_429: 0,
    rate_500: 0,
    rate_timeout: 0,
    rate_malformed_json: 0,
    rate_fenced_json: 0,
    rate_prose_json: 0,
    rate_schema_invalid: 0,
  }));
}

/** Same behaviour with zero latency ("instant jurors" for CPU benchmarks). */
export function withoutLatency(p: SimProfile): SimProfile {
  return mapModels(p, (m) => ({ ...m, latency_ms: 0 }));
}
