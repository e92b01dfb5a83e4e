import { z } from 'zod';
import { Impact } from './defect.js';
import { FilterDecision } from './outputs.js';
import { FieldMapping } from './trace.js';
import { JuryMode } from './verdict.js';
import { KafkaConfig } from './kafka.js';
import { S3Config } from './s3.js';

/** One OpenAI-compatible server (vLLM, SGLang, Ollama, OpenRouter, OpenAI, the simulator). */
export const EndpointConfig = z
  .object({
    /** `openai`: any OpenAI-compatible HTTP server. `simulator`: started in-process by the CLI. `local`: a GGUF model run in-process (llama.cpp). */
    kind: z.enum(['openai', 'simulator', 'local']).default('openai'),
    base_url: z.url().optional(),
    /** Name of the environment variable holding the key; the key itself never enters config. */
    api_key_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name').optional(),
    /** Simulator profile file (kind: simulator); the built-in profile when absent. */
    profile: z.string().optional(),
    max_concurrency: z.int().positive().default(8),
    requests_per_second: z.number().positive().optional(),
    timeout_ms: z.int().positive().default(120_000),
    max_retries: z.int().nonnegative().default(4),
    backoff_base_ms: z.int().nonnegative().default(500),
    backoff_max_ms: z.int().nonnegative().default(30_000),
    headers: z.record(z.string(), z.string()).default({}),
    /**
     * Ask the server to constrain structured replies (jurors, consolidator, moderator): `json_schema`
     * sends each call's JSON Schema as response_format (vLLM, SGLang, OpenAI, serve-local),
     * `json_object` asks for JSON mode, `none` relies on the prompt (replies are validated either way).
     */
    response_format: z.enum(['none', 'json_object', 'json_schema']).default('none'),
    /** kind: local — a .gguf file, or a name from `reasoning-jury models list` (e.g. smollm2-135m). */
    model_path: z.string().min(1).optional(),
    /** kind: local — inference threads; default 1 under CI, else up to 4 (leaving a core free). */
    threads: z.int().positive().optional(),
    /** kind: local — context window in tokens; default the model's training context, capped at 16,384. */
    context_size: z.int().positive().optional(),
  })
  .strict()
  .superRefine((e, ctx) => {
    if (e.kind === 'openai' && !e.base_url) ctx.addIssue({ code: 'custom', path: ['base_url'], message: 'required for kind "openai"' });
    if (e.kind === 'local' && !e.model_path) ctx.addIssue({ code: 'custom', path: ['model_path'], message: 'required for kind "local"' });
  });
export type EndpointConfig = z.infer<typeof EndpointConfig>;

/** A model seat on the jury: a juror, the consolidator or the moderator. */
export const ParticipantConfig = z
  .object({
    id: z.string().min(1),
    endpoint: z.string().min(1),
    model: z.string().min(1),
    temperature: z.number().min(0).max(2).default(1.0),
    top_p: z.number().gt(0).max(1).optional(),
    max_tokens: z.int().positive().optional(),
    /** Sampling seed; jurors sharing a model get distinct default seeds (independent samples). */
    seed: z.int().optional(),
    reasoning_effort: z.enum(['low', 'medium', 'high']).optional(),
    /** Extra JSON merged into the request body (provider-specific knobs). */
    extra_body: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();
export type ParticipantConfig = z.infer<typeof ParticipantConfig>;

export const PriceConfig = z.object({ input_per_mtok: z.number().nonnegative(), output_per_mtok: z.number().nonnegative() }).strict();
export type PriceConfig = z.infer<typeof PriceConfig>;

export const SegmentationConfig = z
  .object({
    /** auto: the record's own steps when present, else the paper's regex. */
    mode: z.enum(['auto', 'regex', 'blank_line', 'given']).default('auto'),
    /** Records with more steps than this become dead letters instead of huge prompts. */
    max_steps: z.int().positive().default(2000),
  })
  .strict();

const rate = z.number().min(0).max(1);

/**
 * One filter rule: a single condition and the decision it makes. Rules run in order and the
 * first that matches decides; a record no rule matches gets `default`.
 */
export const FilterRule = z
  .object({
    name: z.string().optional(),
    decision: FilterDecision,
    /** no verdict could be formed (too few jurors) */
    error: z.literal(true).optional(),
    /** the verdict is degraded (a juror or phase 2 failed) */
    degraded: z.literal(true).optional(),
    /** some defect is at least this severe */
    min_impact: Impact.optional(),
    /** share of steps whose highest severity is fatal */
    fatal_step_rate_above: rate.optional(),
    /** share of steps labelled erroneous at the severity threshold */
    flagged_step_rate_above: rate.optional(),
    /** jurors disagreed: agreement below this */
    confidence_below: rate.optional(),
    /** some juror finding did not make the verdict */
    has_dissent: z.literal(true).optional(),
  })
  .strict()
  .superRefine((r, ctx) => {
    const conditions = ['error', 'degraded', 'min_impact', 'fatal_step_rate_above', 'flagged_step_rate_above', 'confidence_below', 'has_dissent'].filter((k) => (r as Record<string, unknown>)[k] !== undefined);
    if (conditions.length !== 1) ctx.addIssue({ code: 'custom', message: `a rule needs exactly one condition, found ${conditions.length ? conditions.join(', ') : 'none'}` });
  });
export type FilterRule = z.infer<typeof FilterRule>;

export const DEFAULT_FILTER_RULES: z.input<typeof FilterRule>[] = [
  { name: 'no_verdict', error: true, decision: 'review' },
  { name: 'fatal_defect', min_impact: 'fatal', decision: 'drop' },
  { name: 'degraded_verdict', degraded: true, decision: 'review' },
  { name: 'jurors_disagree', confidence_below: 0.5, decision: 'review' },
];

export const FilterPolicy = z
  .object({ rules: z.array(FilterRule).default(DEFAULT_FILTER_RULES as FilterRule[]), default: FilterDecision.default('keep') })
  .strict();
export type FilterPolicy = z.infer<typeof FilterPolicy>;

/**
 * Taxonomy assignment in the stream (src/taxonomy): each consensus defect gets one leaf of the
 * taxonomy from a model call. The section's presence turns it on unless `enabled: false`.
 */
export const TaxonomyConfig = z
  .object({
    enabled: z.boolean().default(true),
    /** Taxonomy JSON (see taxonomy/default.json); the shipped default (paper App. J) when absent. */
    file: z.string().optional(),
    /** Seat that assigns leaves; default: the consolidator's (else first juror's) model at temperature 0. */
    assigner: ParticipantConfig.optional(),
    /** Seat for `taxonomy induce`; default: the assigner. */
    inducer: ParticipantConfig.optional(),
    /** Defects of one record labelled per call. */
    batch_size: z.int().positive().max(200).default(8),
    /** Calls per defect before it is stored as unassigned (invalid or missing answers are retried). */
    max_rounds: z.int().positive().max(20).default(3),
  })
  .strict();
export type TaxonomyConfig = z.infer<typeof TaxonomyConfig>;

/**
 * Adaptive Phase 2 (beyond the paper): skip deliberation when Phase 1 already agrees, and
 * otherwise deliberate only on the findings the jurors disagree about.
 */
export const AdaptivePolicy = z
  .object({
    enabled: z.boolean().default(false),
    /** every successful juror found nothing: the verdict is empty, no Phase 2 call */
    skip_when_empty: z.boolean().default(true),
    /** every successful juror cites the same steps with the same severities: no Phase 2 call */
    skip_when_unanimous: z.boolean().default(true),
    /** false: jurors citing the same steps agree whatever severities they gave (the highest is kept) */
    same_severity: z.boolean().default(true),
    /** findings all jurors agree on go straight to the verdict; only the rest is deliberated */
    contested_only: z.boolean().default(true),
    /** cap on logical rounds when deliberating (ends as turn_cap); absent = only max_turns */
    max_rounds: z.int().positive().optional(),
  })
  .strict();
export type AdaptivePolicy = z.infer<typeof AdaptivePolicy>;

/** Deliberation mode (paper §2.2.2, App. C.2, C.3, F); see docs/deliberation.md. */
export const DeliberationConfig = z
  .object({
    /** hard cap on juror turns, the backstop behind the moderator's own termination */
    max_turns: z.int().positive().max(200).default(12),
    /** most turns the moderator sees at once; when full, its journal restarts with the latest half (openings and its state are always shown) */
    recent_window: z.int().positive().default(8),
    /** a juror (or the moderator) failing this many turns in a row is dropped from the record's deliberation */
    max_consecutive_failures: z.int().positive().default(2),
    /** word-trigram overlap (0..1) above which a juror's message repeats one of its earlier ones (cycling) */
    cycle_similarity: z.number().min(0).max(1).default(0.85),
    adaptive: AdaptivePolicy.prefault({}),
  })
  .strict();
export type DeliberationConfig = z.infer<typeof DeliberationConfig>;

export const JuryConfig = z
  .object({
    endpoints: z.record(z.string(), EndpointConfig),
    jurors: z.array(ParticipantConfig).min(1),
    consolidator: ParticipantConfig.optional(),
    moderator: ParticipantConfig.optional(),
    mode: JuryMode.default('consolidation'),
    /** Phase 1 must have at least this many successful jurors, else the record errors. */
    min_jurors: z.int().positive().optional(),
    /** Wall-clock ceiling on the whole Phase 1 fan-out (App. F). */
    phase1_timeout_ms: z.int().positive().default(600_000),
    /** Include the defect-propagation rule in the auditor prompt (paper default: on). */
    propagation: z.boolean().default(true),
    severity_threshold: Impact.default('minor'),
    segmentation: SegmentationConfig.default({ mode: 'auto', max_steps: 2000 }),
    prices: z.record(z.string(), PriceConfig).default({}),
    cache: z.object({ enabled: z.boolean().default(true), dir: z.string().default('.cache/responses') }).strict().default({ enabled: true, dir: '.cache/responses' }),
    audit_log: z.object({ path: z.string().nullable().default(null) }).strict().default({ path: null }),
    filter: FilterPolicy.default({ rules: DEFAULT_FILTER_RULES as FilterRule[], default: 'keep' }),
    /** Folder of prompt templates overriding the shipped ones (same file names). */
    prompts_dir: z.string().optional(),
    input: z.object({ mapping: FieldMapping.default(FieldMapping.parse({})) }).strict().default({ mapping: FieldMapping.parse({}) }),
    /** Absent = no taxonomy assignment (and config_hash unchanged for configs without it). */
    taxonomy: TaxonomyConfig.optional(),
    /** Absent = the defaults (and config_hash unchanged for configs without it). */
    deliberation: DeliberationConfig.optional(),
    /** Kafka input/outputs (schemas/kafka.ts); operational, not in config_hash. */
    kafka: KafkaConfig.optional(),
    /** S3 input/output settings (schemas/s3.ts); operational, not in config_hash. */
    s3: S3Config.optional(),
  })
  .strict()
  .superRefine((c, ctx) => {
    const seats: Array<[string, { endpoint: string } | undefined]> = [
      ...c.jurors.map((j, i) => [`jurors.${i}`, j] as [string, { endpoint: string }]),
      ['consolidator', c.consolidator],
      ['moderator', c.moderator],
      ['taxonomy.assigner', c.taxonomy?.assigner],
      ['taxonomy.inducer', c.taxonomy?.inducer],
    ];
    for (const [path, seat] of seats) {
      if (seat && !(seat.endpoint in c.endpoints)) {
        ctx.addIssue({ code: 'custom', path: [...path.split('.').map((p) => (/^\d+$/.test(p) ? Number(p) : p)), 'endpoint'], message: `unknown endpoint "${seat.endpoint}" (known: ${Object.keys(c.endpoints).join(', ') || 'none'})` });
      }
    }
    const ids = new Set<string>();
    c.jurors.forEach((j, i) => {
      if (ids.has(j.id)) ctx.addIssue({ code: 'custom', path: ['jurors', i, 'id'], message: `duplicate juror id "${j.id}"` });
      ids.add(j.id);
    });
    if (c.mode === 'consolidation' && !c.consolidator) ctx.addIssue({ code: 'custom', path: ['consolidator'], message: 'mode "consolidation" needs a consolidator' });
    if (c.mode === 'deliberation' && !c.moderator) ctx.addIssue({ code: 'custom', path: ['moderator'], message: 'mode "deliberation" needs a moderator' });
    if (c.min_jurors !== undefined && c.min_jurors > c.jurors.length) ctx.addIssue({ code: 'custom', path: ['min_jurors'], message: `is ${c.min_jurors} but only ${c.jurors.length} jurors are configured` });
  });
export type JuryConfig = z.infer<typeof JuryConfig>;
export type JuryConfigInput = z.input<typeof JuryConfig>;
