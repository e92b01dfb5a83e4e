/**
 * The jury config. Each key's meaning lives in its `.describe()` text, which is what
 * docs/config.md is generated from (`npm run docs:config`; a test fails when the page drifts).
 */
import { z } from 'zod';
import { Impact } from './defect.js';
import { ExternalSeatConfig } from './external.js';
import { FilterDecision } from './outputs.js';
import { FieldMapping } from './trace.js';
import { GROUNDING_POLICIES, JuryMode } from './verdict.js';
import { KafkaConfig } from './kafka.js';
import { S3Config } from './s3.js';
import type { Phase } from './usage.js';

export const BreakerConfig = z
  .object({
    failures: z.int().positive().default(5).describe('Failures in a row that mark the endpoint down: refused or reset connections, DNS failures, attempt timeouts and HTTP 5xx (but not a reply that rejects a request field). While it is down, intake pauses and calls to it wait instead of failing; the outage ends only when a trial call is answered (the probe answering is not enough). A call whose every attempt fails so while the endpoint is up stops the run (exit 3), its record uncommitted.'),
    probe_interval_ms: z.int().positive().default(1000).describe('Wait between probes of a down endpoint (GET /models, the first one at once; kind `local`: one waiting call, after this wait); doubles after each failed probe.'),
    probe_max_interval_ms: z.int().positive().default(15_000).describe('Longest wait between two probes of a down endpoint.'),
  })
  .strict()
  .describe('Circuit breaker of this endpoint (docs/operating.md, "Endpoint outages"). The longest outage a run waits out is `max_outage_ms`.');
export type BreakerConfig = z.infer<typeof BreakerConfig>;

/** Whether a command line leaves a quote open (outside the other kind of quote; a backslash escapes outside single quotes). */
function unbalancedQuotes(line: string): boolean {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === '\\' && quote !== "'") i++;
    else if (quote === undefined && (c === '"' || c === "'")) quote = c;
    else if (c === quote) quote = undefined;
  }
  return quote !== undefined;
}

export const EndpointBatchConfig = z
  .object({
    dialect: z
      .enum(['openai', 'command', 'none'])
      .default('openai')
      .describe('How this endpoint\'s calls go out when the run is in batch mode (`batch.enabled` or `run --batch`; docs/batch.md): `openai` through the OpenAI Files + Batches API on this endpoint\'s `base_url` and key (OpenAI, Azure OpenAI, Together, Groq and the simulator speak it); `command` by running `batch.command` on this machine over a local input file (offline inference, e.g. `vllm run-batch`); `none` keeps them online, one HTTP request each. Endpoints of kind `local` always stay online.'),
    max_requests: z.int().positive().max(50_000).default(50_000).describe('Most requests in one batch (OpenAI allows 50,000); a batch is submitted as soon as it holds this many.'),
    max_bytes: z
      .int()
      .positive()
      .max(200 * 1024 * 1024)
      .default(190 * 1024 * 1024)
      .describe('Largest batch input file in bytes (OpenAI allows 200 MB); a request that would push the file past it goes into the next batch.'),
    quiet_ms: z.int().nonnegative().default(2000).describe('A batch that is not full is submitted once no new request has joined it for this long, so a run never waits on a batch nobody adds to.'),
    poll_interval_ms: z.int().positive().default(30_000).describe('Wait between two status checks of a submitted batch (GET /batches/{id}).'),
    completion_window: z.string().default('24h').describe('The `completion_window` each batch is created with (OpenAI accepts `24h`); a batch not finished within it expires and its requests are submitted again in a new batch.'),
    command: z
      .string()
      .trim()
      .min(1)
      .optional()
      .describe(
        'dialect `command`: the command that answers one batch input file, with the placeholders `{input}` (the input JSONL), `{output}` (where it writes the output JSONL) and `{model}`, e.g. `vllm run-batch -i {input} -o {output} --model {model}`. Split into words like a shell would (quotes, backslashes) and run without a shell; only a command holding one of `| & ; < > $` and a backtick runs under `/bin/sh -c`, the placeholders then quoted for it. Required for dialect `command`.',
      ),
    work_dir: z.string().min(1).optional().describe('dialect `command`: folder of the input and output files (`~` not expanded); absent: `reasoning-jury-batches/<endpoint>` under the system temp folder. A relative path is relative to the working directory.'),
  })
  .strict()
  .superRefine((b, ctx) => {
    if (b.command && unbalancedQuotes(b.command)) ctx.addIssue({ code: 'custom', path: ['command'], message: 'batch.command has an unclosed quote' });
    if (b.dialect === 'command' && !b.command) ctx.addIssue({ code: 'custom', path: ['command'], message: 'batch.command is required when batch.dialect is "command" (e.g. "vllm run-batch -i {input} -o {output} --model {model}")' });
  })
  .describe('Batch inference settings of this endpoint (docs/batch.md). Used only when the run is in batch mode; absent: the defaults below.');
export type EndpointBatchConfig = z.infer<typeof EndpointBatchConfig>;

export const EndpointConfig = z
  .object({
    kind: z
      .enum(['openai', 'simulator', 'local'])
      .default('openai')
      .describe('`openai`: any OpenAI-compatible HTTP server (vLLM, SGLang, Ollama, OpenRouter, OpenAI). `simulator`: the built-in juror simulator, started in-process by the CLI (no network, no model). `local`: a GGUF model run in-process on llama.cpp.'),
    base_url: z.url().optional().describe('API root of the server, version path included (e.g. `http://127.0.0.1:8000/v1`). Required for kind `openai`.'),
    api_key_env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')
      .optional()
      .describe('Name of the environment variable that holds the API key; the key itself never enters the config. Absent (or the variable unset): a placeholder key is sent, which suits an unsecured server.'),
    profile: z.string().optional().describe('kind `simulator`: simulator profile file (YAML, e.g. `examples/sim-profile.yaml`); the built-in profile when absent. A relative path is relative to the config file.'),
    max_concurrency: z.int().positive().default(8).describe('Most calls in flight to this endpoint at once; also the size of its HTTP connection pool, and what Phase 1 admission paces records by. Set 1 for a server that decodes one request at a time (llama.cpp server, llama-cpp-python), so requests wait in our queue, which `timeout_ms` and the Phase 1 ceiling do not count, rather than on the server.'),
    requests_per_second: z.number().positive().optional().describe('Most request starts per second; every HTTP attempt counts, retries included. Counted over windows of about 250 ms, so at most a quarter of a second\'s starts go out together. Absent: no rate limit.'),
    timeout_ms: z.int().positive().default(120_000).describe('Longest one attempt may take, from leaving our queue to the end of the reply body (kind `local`: the model\'s run, not the wait in its queue); a timed-out attempt is retried.'),
    max_retries: z.int().nonnegative().default(4).describe('Retries after the first attempt for retryable failures (HTTP 408, 409, 429 and 5xx, timeouts, connection errors); 0 = a single attempt. A reply saying a request field is invalid is never retried, whatever its status.'),
    backoff_base_ms: z.int().nonnegative().default(500).describe('Base of the exponential backoff: retry n waits a random share (full jitter) of min(`backoff_max_ms`, base × 2^(n−1)), and never less than a Retry-After the server sent.'),
    backoff_max_ms: z.int().nonnegative().default(30_000).describe('Cap on one backoff delay (a server\'s Retry-After may ask for more, up to 120 s).'),
    max_reply_bytes: z.int().positive().default(4 * 1024 * 1024).describe('Largest chat reply body read, in bytes (default 4 MiB, far above any verdict; a long reasoning trace is some 100 KB). Reading stops beyond it and that juror call fails for this record (not retried), so one runaway reply cannot fill memory or stall other records.'),
    breaker: BreakerConfig.prefault({}),
    headers: z.record(z.string(), z.string()).default({}).describe('Extra HTTP headers sent with every request (e.g. OpenRouter\'s `X-Title`).'),
    response_format: z
      .enum(['none', 'json_object', 'json_schema', 'json_object_schema', 'guided_json', 'auto'])
      .default('none')
      .describe('How structured calls (jurors, consolidator, moderator) send their own JSON Schema, in the dialect the server takes: `json_schema` as response_format `{type: json_schema, json_schema: {schema}}` (OpenAI, vLLM, SGLang, serve-local); `json_object_schema` as `{type: json_object, schema}` (llama.cpp server, llama-cpp-python); `guided_json` as a top-level `guided_json` field (older vLLM); `json_object` JSON mode without a schema; `none` nothing, the prompt alone. `auto` tries them once per run in that order with a tiny request and keeps the best one the server accepts (logged). Free-text calls (deliberation turns) never carry one. Replies are validated either way; a server rejecting the field fails the call at once, naming this setting.'),
    max_tokens_field: z
      .enum(['max_tokens', 'max_completion_tokens'])
      .default('max_tokens')
      .describe('Request field that carries the reply budget (`max_tokens`): `max_completion_tokens` for OpenAI\'s reasoning models (o-series, gpt-5), which refuse `max_tokens`; most other servers take `max_tokens`.'),
    model_path: z.string().min(1).optional().describe('kind `local`: a .gguf file (`~` expanded), or a name from `reasoning-jury models list` (e.g. `smollm2-135m`). Required for kind `local`. A relative path is relative to the config file.'),
    threads: z.int().positive().optional().describe('kind `local`: inference threads; default 1 under CI, else up to 4 (leaving a core free).'),
    context_size: z.int().positive().optional().describe('kind `local`: context window in tokens; default the model\'s training context, capped at 16,384.'),
    context_window: z
      .int()
      .positive()
      .optional()
      .describe('Context window in tokens of the models served here (prompt plus reply). A call whose estimated prompt (characters / 4, plus 4 per message) plus max_tokens exceeds it fails before it is sent. Absent: read once per model from GET /models when the server tells (vLLM `max_model_len`, llama.cpp `meta.n_ctx` / `meta.n_ctx_train`, OpenRouter `context_length`), else not checked. Not used by kind `local`, which checks with its own tokenizer.'),
    batch: EndpointBatchConfig.optional(),
  })
  .strict()
  .superRefine((e, ctx) => {
    if (e.kind === 'openai' && !e.base_url) ctx.addIssue({ code: 'custom', path: ['base_url'], message: 'required for kind "openai"' });
    if (e.kind === 'local' && !e.model_path) ctx.addIssue({ code: 'custom', path: ['model_path'], message: 'required for kind "local"' });
  })
  .describe('One model server, named by its key under `endpoints`; seats refer to it by that name.');
export type EndpointConfig = z.infer<typeof EndpointConfig>;

export const ParticipantConfig = z
  .object({
    id: z.string().min(1).describe('Seat name, unique among jurors. It names the seat in verdicts, usage rows and the audit log, and seeds its sampling when `seed` is absent.'),
    kind: z.literal('model').optional().describe('`model` (or absent): a seat that calls a model. A juror may instead be `kind: external` (see [External seats](#external-seats)).'),
    endpoint: z.string().min(1).describe('Name of an entry under `endpoints`.'),
    model: z.string().min(1).describe('Model name sent to the endpoint (for kind `local` only a label); also the key into `prices`.'),
    temperature: z.number().min(0).max(2).default(1.0).describe('Sampling temperature.'),
    top_p: z.number().gt(0).max(1).optional().describe('Nucleus sampling; absent: the server\'s default.'),
    max_tokens: z.int().positive().optional().describe('Most tokens per reply; absent: `max_tokens.<kind of call>` (kind `local`: the model\'s context).'),
    truncation_retry_max_tokens: z
      .int()
      .positive()
      .optional()
      .describe('A reply cut at max_tokens (finish reason `length`) is asked again once with this larger budget (capped by the context window); absent, or not larger than the budget used: the seat fails with `truncated at max_tokens (N)`. A cut reply is never repaired into a judgement.'),
    seed: z.int().optional().describe('Sampling seed. Absent: a stable seed derived from `id`, so jurors sharing a model draw independent samples and a re-run draws the same ones.'),
    reasoning_effort: z.enum(['low', 'medium', 'high']).optional().describe('Reasoning effort sent to reasoning models (ignored by kind `local`); absent: not sent.'),
    extra_body: z.record(z.string(), z.unknown()).optional().describe('Extra JSON merged into the request body last, so it can override any field (provider-specific knobs; ignored by kind `local`).'),
  })
  .strict()
  .describe('A model seat: a juror, the consolidator, the moderator or a taxonomy seat.');
export type ParticipantConfig = z.infer<typeof ParticipantConfig>;

/** One `jurors` entry: a model seat, or an external judge (schemas/external.ts). */
export const JurorConfig = z.discriminatedUnion('kind', [ParticipantConfig, ExternalSeatConfig]);
export type JurorConfig = z.infer<typeof JurorConfig>;
export { ExternalSeatConfig, isExternalSeat } from './external.js';

/** max_tokens sent by a seat without its own, per kind of call (`max_tokens` in the config). */
export const DEFAULT_MAX_TOKENS: Readonly<Record<Phase, number>> = {
  phase1: 8192,
  consolidation: 8192,
  extraction: 8192,
  moderator: 2048,
  juror_turn: 2048,
  // induction writes a whole taxonomy in one reply
  taxonomy: 8192,
  // the verification passes answer one short line per finding
  removal: 4096,
  arbiter: 4096,
  // one yes/no with a sentence
  grounding: 1024,
  // a repair retry re-solves the whole problem with its reasoning (App. N.1 allowed 32,000)
  repair: 16384,
};

const budget = (phase: Phase, what: string) => z.int().positive().optional().describe(`${what}; absent: ${DEFAULT_MAX_TOKENS[phase]}.`);

export const MaxTokensConfig = z
  .object({
    phase1: budget('phase1', 'Juror Phase 1 judgements'),
    consolidation: budget('consolidation', 'The consolidator\'s merged judgement'),
    moderator: budget('moderator', 'Each moderator decision'),
    juror_turn: budget('juror_turn', 'Each juror turn of a deliberation (prose)'),
    extraction: budget('extraction', 'The verdict extracted from a deliberation'),
    taxonomy: budget('taxonomy', 'Taxonomy assignment and induction calls'),
    removal: budget('removal', 'The removal pass (`removal_pass`)'),
    arbiter: budget('arbiter', 'The evidence arbiter (`arbiter`)'),
    grounding: budget('grounding', 'The deliberation grounding checker\'s model call (`grounding.checker.model`)'),
    repair: budget('repair', 'Each defect-guided retry of the generator (`repair`)'),
  })
  .strict()
  .describe('Default max_tokens per kind of call, for seats without their own `max_tokens` (kind `local` endpoints excepted: the model\'s context bounds them). Every HTTP call carries a budget, so a server never generates to the end of its context for a reply nobody waits for.');
export type MaxTokensConfig = z.infer<typeof MaxTokensConfig>;

export const PriceConfig = z
  .object({
    input_per_mtok: z.number().nonnegative().describe('USD per million prompt tokens.'),
    output_per_mtok: z.number().nonnegative().describe('USD per million completion tokens.'),
    batch_input_per_mtok: z.number().nonnegative().optional().describe('USD per million prompt tokens of a call that went through a batch (docs/batch.md). Absent: `input_per_mtok` × `batch_discount`.'),
    batch_output_per_mtok: z.number().nonnegative().optional().describe('USD per million completion tokens of a call that went through a batch. Absent: `output_per_mtok` × `batch_discount`.'),
    batch_discount: z.number().nonnegative().max(1).optional().describe('Share of the online price a batched call pays when no batch rate is given; absent: 0.5 (OpenAI\'s Batch API: half price).'),
  })
  .strict()
  .describe('The list price of one model, keyed by the seats\' `model` name.');
export type PriceConfig = z.infer<typeof PriceConfig>;

/**
 * The one step cap. It is the default of `segmentation.max_steps` and nothing else caps the
 * number of steps: record mapping and segmentation both read the configured value.
 */
export const DEFAULT_MAX_STEPS = 2000;

export const SegmentationConfig = z
  .object({
    mode: z
      .enum(['auto', 'regex', 'blank_line', 'given'])
      .default('auto')
      .describe('`auto`: the record\'s own `steps` when it has them, else `regex`. `regex`: the paper\'s rule (§2.1), a boundary is an end-of-sentence character followed by a blank line. `blank_line`: every blank line is a boundary. `given`: only the record\'s own steps (a record without them is a dead letter).'),
    max_steps: z
      .int()
      .positive()
      .default(DEFAULT_MAX_STEPS)
      .describe('The step cap: a record with more steps becomes a dead letter instead of a huge prompt. It applies to a record\'s own `steps` list when the record is read (whatever the mode) and to the steps segmentation produces.'),
  })
  .strict()
  .describe('How a trace becomes numbered steps (`[STEP-n]`). Steps a record carries are used as given and never re-segmented.');

const rate = z.number().min(0).max(1);

const conditionShape = {
  error: z.literal(true).optional().describe('Condition: no verdict could be formed (too few jurors).'),
  degraded: z.literal(true).optional().describe('Condition: the verdict is degraded (a juror or Phase 2 failed).'),
  min_impact: Impact.optional().describe('Condition: some consensus defect is at least this severe (`neutral` < `minor` < `major` < `fatal`).'),
  fatal_step_rate_above: rate.optional().describe('Condition: the share of steps whose highest severity is fatal is above this.'),
  flagged_step_rate_above: rate.optional().describe('Condition: the share of steps labelled erroneous (at `severity_threshold`) is above this.'),
  confidence_below: rate.optional().describe('Condition: jury agreement (the verdict\'s confidence) is below this.'),
  has_dissent: z.literal(true).optional().describe('Condition: some juror finding did not make the verdict.'),
  dissent_at_least: z.int().positive().optional().describe('Condition: at least this many juror findings did not make the verdict (dissenting views).'),
  category: z.array(z.string().min(1)).min(1).optional().describe('Condition: some consensus defect was assigned one of these taxonomy categories (needs `taxonomy`; unassigned defects match none).'),
  leaf: z.array(z.string().min(1)).min(1).optional().describe('Condition: some consensus defect was assigned one of these taxonomy leaves (needs `taxonomy`).'),
  votes_below: z.int().positive().optional().describe('Condition: some consensus defect has fewer juror votes than this (only defects whose mode records votes: `majority`, `consolidation`, `deliberation`).'),
};
/** The condition keys, in the order they are tested and named in errors. */
export const FILTER_CONDITION_KEYS = Object.keys(conditionShape) as Array<keyof typeof conditionShape>;

const presentConditions = (r: Record<string, unknown>): string[] => FILTER_CONDITION_KEYS.filter((k) => r[k] !== undefined);

export const FilterCondition = z
  .object(conditionShape)
  .strict()
  .superRefine((c, ctx) => {
    const found = presentConditions(c);
    if (found.length !== 1) ctx.addIssue({ code: 'custom', message: `a condition of \`all\` needs exactly one key, found ${found.length ? found.join(', ') : 'none'}` });
  })
  .describe('One condition of a rule\'s `all` list: exactly one of the condition keys of a rule.');
export type FilterCondition = z.infer<typeof FilterCondition>;

export const FilterRule = z
  .object({
    name: z.string().optional().describe('Name shown in the decision\'s `reason`; absent: `rule <n>` (1-based).'),
    decision: FilterDecision.describe('What a matching rule decides: `keep`, `drop` or `review`.'),
    ...conditionShape,
    all: z.array(FilterCondition).min(1).optional().describe('Condition: every condition in this list holds (each item has one condition key, e.g. `[{ category: [arithmetic] }, { votes_below: 2 }]`).'),
  })
  .strict()
  .superRefine((r, ctx) => {
    const found = [...presentConditions(r), ...(r.all !== undefined ? ['all'] : [])];
    if (found.length !== 1) ctx.addIssue({ code: 'custom', message: `a rule needs exactly one condition (or \`all\` with a list of them), found ${found.length ? found.join(', ') : 'none'}` });
  })
  .describe('One rule: a `decision` and exactly one condition, or `all:` with a list of conditions that must all hold.');
export type FilterRule = z.infer<typeof FilterRule>;

export const DEFAULT_FILTER_RULES: z.input<typeof FilterRule>[] = [
  { name: 'no_verdict', error: true, decision: 'review' },
  { name: 'fatal_defect', min_impact: 'fatal', decision: 'drop' },
  { name: 'degraded_verdict', degraded: true, decision: 'review' },
  { name: 'jurors_disagree', confidence_below: 0.5, decision: 'review' },
];

export const FilterPolicy = z
  .object({
    rules: z.array(FilterRule).default(DEFAULT_FILTER_RULES as FilterRule[]).describe('Rules in order; the first whose condition holds decides. Each has a `decision` and exactly one condition (or `all:` with several). `reasoning-jury decide` applies another policy to committed verdicts without re-judging.'),
    default: FilterDecision.default('keep').describe('Decision for a record no rule matches.'),
  })
  .strict()
  .describe('Keep / drop / review per record (the `decisions` table): rules run in order, the first that matches decides, and a record no rule matches gets `default`.');
export type FilterPolicy = z.infer<typeof FilterPolicy>;

export const TaxonomyConfig = z
  .object({
    enabled: z.boolean().default(true).describe('`false` keeps the section but turns assignment off.'),
    file: z.string().optional().describe('Taxonomy JSON (see `taxonomy/default.json`); absent: the shipped default (paper App. J). A relative path is relative to the config file.'),
    assigner: ParticipantConfig.optional().describe('Seat that assigns leaves; absent: the consolidator\'s (else the first juror\'s) model at temperature 0.'),
    inducer: ParticipantConfig.optional().describe('Seat for `reasoning-jury taxonomy induce`; absent: the assigner.'),
    batch_size: z.int().positive().max(200).default(8).describe('Defects of one record labelled per call.'),
    max_rounds: z.int().positive().max(20).default(3).describe('Calls per defect before it is stored as unassigned (invalid or missing answers are retried).'),
  })
  .strict()
  .describe('Taxonomy assignment in the stream (docs/taxonomy.md): each consensus defect gets one leaf of the taxonomy from a model call. The section\'s presence turns it on unless `enabled: false`.');
export type TaxonomyConfig = z.infer<typeof TaxonomyConfig>;

export const AdaptivePolicy = z
  .object({
    enabled: z.boolean().default(false).describe('Turn the adaptive policy on (the other keys of this section apply only then).'),
    skip_when_empty: z.boolean().default(true).describe('Every successful juror found nothing: the verdict is empty, no Phase 2 call.'),
    skip_when_unanimous: z.boolean().default(true).describe('Every successful juror cites the same steps with the same severities: no Phase 2 call.'),
    same_severity: z.boolean().default(true).describe('`false`: jurors citing the same steps agree whatever severities they gave (the highest is kept).'),
    contested_only: z.boolean().default(true).describe('Findings all jurors agree on go straight to the verdict; only the rest is deliberated.'),
    max_rounds: z.int().positive().optional().describe('Cap on logical rounds when deliberating (ends as `turn_cap`); absent: only `max_turns` caps.'),
  })
  .strict()
  .describe('Adaptive Phase 2 (beyond the paper): skip deliberation when Phase 1 already agrees, and otherwise deliberate only on the findings the jurors disagree about.');
export type AdaptivePolicy = z.infer<typeof AdaptivePolicy>;

export const CASCADE_RULES = ['disagree_step', 'disagree_severity', 'fatal', 'contested', 'low_confidence', 'empty', 'any_finding', 'failed'] as const;
export const CascadeRule = z.enum(CASCADE_RULES);
export type CascadeRule = z.infer<typeof CascadeRule>;

export const CascadeConfig = z
  .object({
    start: z.int().positive().default(2).describe('Seats that judge every record first (the first `start` of `jurors`, in order; an external seat counts as a seat and costs no call).'),
    add: z.enum(['one', 'all']).default('one').describe('What an escalation seats: `one` (the next seat, then the rules are asked again) or `all` (every remaining seat at once).'),
    rules: z
      .array(CascadeRule)
      .min(1)
      .default(['disagree_step', 'disagree_severity', 'fatal', 'contested', 'failed'])
      .describe('When to seat more jurors, asked over the successful judgements so far (any rule firing escalates): `disagree_step` (a step one seat flags and another passes), `disagree_severity` (two seats flag a step with different severities), `fatal` (some seat found a fatal defect), `contested` (a finding, by its cited steps, backed by fewer than all seats), `low_confidence` (agreement, as the verdict\'s `confidence`, below `low_confidence_below`), `empty` (every seat found nothing), `any_finding` (some seat flagged any step), `failed` (fewer seats succeeded than `start`: a seat failed or an external seat abstained).'),
    low_confidence_below: z.number().min(0).max(1).default(0.5).describe('Threshold of the `low_confidence` rule.'),
  })
  .strict()
  .describe('The cascade of `strategy: cascade`: how many seats start, what an escalation adds, and which rules escalate. Phase 2 then works on the seats that ran: `min_jurors` and its default (half of the seats, rounded up) count seats that ran, and so does `majority` (strictly more than half of those that succeeded).');
export type CascadeConfig = z.infer<typeof CascadeConfig>;

/** Rules that compare seats: on the judgements of one seat they never fire. */
const TWO_SEAT_RULES: readonly CascadeRule[] = ['disagree_step', 'disagree_severity', 'contested', 'low_confidence'];

/** A cascade that could never start as configured, or never escalate, is a mistake, not a setting. */
function cascadeIssues(c: CascadeConfig, seats: number, ctx: z.RefinementCtx): void {
  if (c.start > seats) ctx.addIssue({ code: 'custom', path: ['phase1', 'cascade', 'start'], message: `is ${c.start} but only ${seats} jurors are configured` });
  if (c.start === 1 && c.rules.every((r) => TWO_SEAT_RULES.includes(r))) {
    ctx.addIssue({ code: 'custom', path: ['phase1', 'cascade', 'rules'], message: `${c.rules.join(', ')} compare seats, so with start: 1 none can fire and no record would ever escalate; start at 2, or add a rule that reads one seat (fatal, empty, any_finding, failed)` });
  }
}

export const Phase1Config = z
  .object({
    strategy: z.enum(['all', 'cascade']).default('all').describe('`all`: every seat judges every record (mode `single`: the first). `cascade`: the first `cascade.start` seats judge, further seats only when a `cascade.rules` rule fires (docs/cost.md, "Cascade Phase 1").'),
    cascade: CascadeConfig.prefault({}),
  })
  .strict()
  .describe('How Phase 1 seats the jurors. Absent (or `strategy: all`): every seat, as before, and config_hash is unchanged.');
export type Phase1Config = z.infer<typeof Phase1Config>;

export const DeliberationConfig = z
  .object({
    max_turns: z.int().positive().max(200).default(12).describe('Hard cap on juror turns, the backstop behind the moderator\'s own termination.'),
    recent_window: z.int().positive().default(8).describe('Most turns the moderator sees at once; when full, its journal restarts with the latest half (openings and its state are always shown).'),
    max_consecutive_failures: z.int().positive().default(2).describe('A juror (or the moderator) failing this many turns in a row is dropped from the record\'s deliberation.'),
    cycle_similarity: z.number().min(0).max(1).default(0.85).describe('Word-trigram overlap above which a juror\'s message repeats one of its earlier ones (cycling).'),
    adaptive: AdaptivePolicy.prefault({}),
  })
  .strict()
  .describe('Deliberation mode (paper §2.2.2, App. C.2, C.3, F; docs/deliberation.md). Used only with `mode: deliberation`; absent: the defaults below.');
export type DeliberationConfig = z.infer<typeof DeliberationConfig>;

/** The seat a verification pass calls when it names none: the consolidator's, else the moderator's, else the first juror's. */
const passSeat = (what: string, id: string) =>
  ParticipantConfig.optional().describe(`Seat that ${what}; absent: the consolidator's (else the moderator's, else the first juror's) seat under the id \`${id}\`.`);

export const RemovalPassConfig = z
  .object({
    enabled: z.boolean().default(true).describe('`false` keeps the section but turns the pass off.'),
    seat: passSeat('reviews the consensus defects', 'removal'),
    max_findings: z.int().positive().max(200).default(40).describe('Most consensus defects reviewed in one call; defects beyond it are kept unreviewed.'),
  })
  .strict()
  .describe('Removal pass (paper App. E, `dropped_negatives`): after Phase 2, one model call re-reads the trace and the consensus defects and drops those the trace does not support, each with a reason. A failed call keeps the verdict as it was, marked degraded; an endpoint outage stops the stage as for any call. The section\'s presence turns it on unless `enabled: false`.');
export type RemovalPassConfig = z.infer<typeof RemovalPassConfig>;

export const ArbiterConfig = z
  .object({
    enabled: z.boolean().default(true).describe('`false` keeps the section but turns the arbiter off.'),
    seat: passSeat('rules on contested defects', 'arbiter'),
    dissent: z.boolean().default(true).describe('Also put dissenting Phase 1 findings (cited by a juror, absent from the verdict) before the arbiter; an upheld one joins the verdict.'),
    max_findings: z.int().positive().max(200).default(40).describe('Most contested findings ruled on in one call (split votes first, then dissent); the rest stay as Phase 2 left them.'),
  })
  .strict()
  .describe('Evidence arbiter (paper App. E, `negative_adjudications`): one model call rules on the contested findings, consensus defects with a split vote (fewer votes than jurors that succeeded) and dissenting Phase 1 findings, from the trace: `upheld` or `rejected`, with a rationale. A rejected consensus defect leaves the verdict, an upheld dissenting one joins it. It sees the same consensus as the removal pass (the two run side by side); a defect either removes is gone. A failed call keeps the verdict, marked degraded. The section\'s presence turns it on unless `enabled: false`.');
export type ArbiterConfig = z.infer<typeof ArbiterConfig>;

export const GroundingConfig = z
  .object({
    policy: z.enum(GROUNDING_POLICIES).default('off').describe('What happens to a consensus defect none of whose evidence quotes is found in the trace (docs/grounding.md): `off` no grounding at all; `keep` it stays; `flag` it stays and the verdict is marked degraded (the default filter sends it to review); `drop` it leaves the verdict. With any policy but `off`, a defect whose quotes sit only in other steps gets those steps as `statement_refs`, and `voters` / `vote_count` are checked against the Phase 1 findings; every check and correction is recorded in the verdict (`grounding`) and `verdict_details`.'),
    max_edit_ratio: z.number().min(0).max(0.5).default(0.2).describe('Fuzzy match threshold: a quote matches a step when some run of the step\'s tokens is within floor(ratio x quote tokens) token edits of it, after normalisation (whitespace, case, LaTeX, number formatting).'),
    min_fuzzy_tokens: z.int().positive().default(4).describe('Quotes shorter than this many tokens must match exactly.'),
    check_voters: z.boolean().default(true).describe('Check each consensus defect\'s `voters` against the Phase 1 findings each juror made (a finding on a shared step with a compatible description) and correct `voters` / `vote_count`.'),
    checker: z
      .object({
        enabled: z.boolean().default(true).describe('`false` keeps the section but turns the checker off.'),
        model: z.boolean().default(false).describe('Ask a model (`prompts/grounding-check.user.md`, phase `grounding`) about claims the deterministic check cannot ground, instead of rejecting them; a failed call accepts the claim.'),
        seat: ParticipantConfig.optional().describe('Seat of the checker call; absent: the moderator\'s seat under the id `grounding`.'),
      })
      .strict()
      .optional()
      .describe('Deliberation only: before the moderator counts a juror\'s new claim as evidence, its quote is looked up in the cited steps; an ungrounded claim is named to the moderator as not evidence. A failed check accepts the claim (benefit of the doubt, App. F) and records that it did.'),
  })
  .strict()
  .describe('Deterministic grounding of the verdict\'s defects (no model call), after Phase 2 and before the verification passes. Absent: off.');
export type GroundingConfig = z.infer<typeof GroundingConfig>;
export const REPAIR_GATES = ['any_defect', 'fatal', 'rules'] as const;

export const RepairAnswerConfig = z
  .object({
    kind: z.enum(['integer', 'text', 'choice']).default('integer').describe('What the final answer is: `integer` (the prompt asks for `ANSWER: <integer>`; answers compare as numbers), `text` (free text on the ANSWER line; compared after trimming, case and inner whitespace folded) or `choice` (one of `choices`; compared case-folded).'),
    choices: z.array(z.string().min(1)).min(2).optional().describe('kind `choice`: the allowed answers, listed in the prompt (e.g. `[A, B, C, D]`).'),
  })
  .strict()
  .superRefine((a, ctx) => {
    if (a.kind === 'choice' && !a.choices) ctx.addIssue({ code: 'custom', path: ['choices'], message: 'required for kind "choice"' });
  })
  .describe('The answer contract of the retry prompt: the last line the generator must write, `ANSWER: ...`.');
export type RepairAnswerConfig = z.infer<typeof RepairAnswerConfig>;

export const RepairConfig = z
  .object({
    enabled: z.boolean().default(true).describe('`false` keeps the section but turns repair off.'),
    generator: ParticipantConfig.describe('Seat that writes the retries (any OpenAI-compatible endpoint, through the same gateway as the jury: limits, retries, cache, audit log, ledger under phase `repair`).'),
    gate: z.enum(REPAIR_GATES).default('any_defect').describe('Which judged records are retried: `any_defect` (some consensus defect above neutral), `fatal` (some fatal defect) or `rules` (the `rules` below decide). Records without a verdict are never retried.'),
    rules: z.array(FilterRule).min(1).optional().describe('gate `rules`: filter rules in the language of `filter.rules`; a record is retried when the first rule that matches decides `drop` or `review` (a matching `keep` rule exempts it); the rule\'s name is the row\'s `gate`.'),
    conditions: z.array(z.enum(['steps', 'full'])).min(1).default(['steps', 'full']).describe('Feedback conditions, each a retry of its own: `steps` (the deduplicated cited step numbers only) and/or `full` (each non-neutral finding with its steps, severity and what went wrong). Neutral findings never appear.'),
    attempts: z.int().positive().max(16).default(1).describe('Retries per record and condition (rows `attempt` 1..n; each draws its own sample).'),
    answer: RepairAnswerConfig.prefault({}),
    rejudge: z.boolean().default(false).describe('Judge each retry again with the same jury; the row gets the new defect count, highest severity and filter decision (`new_*`).'),
  })
  .strict()
  .superRefine((r, ctx) => {
    if (r.gate === 'rules' && !r.rules) ctx.addIssue({ code: 'custom', path: ['rules'], message: 'required for gate "rules"' });
  })
  .describe('Defect-guided repair (paper §6, App. N; docs/repair.md): after the decision, each record the gate selects is re-solved by the `generator` with the jury\'s findings in the prompt, under each condition; the answer is extracted and compared with the record\'s reference answer (`input.mapping.reference_answer`) and one `repairs` row is written per (record, condition, attempt), in the same range commit. The section\'s presence turns it on unless `enabled: false`.');
export type RepairConfig = z.infer<typeof RepairConfig>;

export const CorpusConfig = z
  .object({
    enabled: z.boolean().default(true).describe('Write the curated corpus (`corpus/`, docs/layout.md): every judged input record as it was read, with its decision, the rule that fired and a defect summary, one part per decision and range. `--corpus off` turns it off for one run.'),
    format: z.enum(['parquet', 'jsonl']).default('parquet').describe('`parquet` (under `corpus/`) or `jsonl` (under `jsonl/corpus/`, one JSON object per line with the record nested under `record`). `--corpus parquet|jsonl` overrides it.'),
  })
  .strict()
  .describe('The curated corpus. Records that became dead letters have no decision and are not in it (they are in `dead_letters/`).');
export type CorpusConfig = z.infer<typeof CorpusConfig>;

export const DeltaConfig = z
  .object({
    checkpoint_interval: z.int().nonnegative().default(100).describe('A Delta checkpoint (`_delta_log/<version>.checkpoint.parquet` and `_last_checkpoint`) after every this many commits of a table, so a table of many ranges opens from one file; 0: none.'),
  })
  .strict()
  .describe('The Delta Lake tables of `table_format: delta` (docs/delta.md).');
export type DeltaConfig = z.infer<typeof DeltaConfig>;

export const TABLE_FORMATS = ['none', 'delta'] as const;

export const OutputConfig = z
  .object({
    corpus: CorpusConfig.prefault({}),
    table_format: z.enum(TABLE_FORMATS).default('none').describe('`delta`: every Parquet table folder (`verdicts/`, `corpus/`, ...) is also a Delta Lake table, one Delta commit per committed range (docs/delta.md); `none`: manifests only. `--table-format` overrides it.'),
    delta: DeltaConfig.prefault({}),
  })
  .strict()
  .describe('What a run writes besides the shard tables (operational, not in config_hash).');
export type OutputConfig = z.infer<typeof OutputConfig>;

export const VERDICT_DETAILS = ['auto', 'on', 'off'] as const;
export const VerdictDetails = z.enum(VERDICT_DETAILS);
export type VerdictDetails = z.infer<typeof VerdictDetails>;
/** What a run does with a record_id it has seen before in the same run (docs/reading-shards.md, "Duplicate record ids"). */
export const DuplicateIdPolicy = z.enum(['dead_letter', 'keep_first', 'keep_all']);
export type DuplicateIdPolicy = z.infer<typeof DuplicateIdPolicy>;

/** What a run does when an input's committed records changed since (docs/reading-shards.md, "Changed input"). */
export const ChangedInputPolicy = z.enum(['error', 'rejudge']);
export type ChangedInputPolicy = z.infer<typeof ChangedInputPolicy>;

export const JuryConfig = z
  .object({
    endpoints: z.record(z.string(), EndpointConfig).describe('Model servers by name; each seat names one in its `endpoint`.'),
    jurors: z.array(JurorConfig).min(1).describe('Phase 1 seats: each juror judges every trace independently (mode `single` calls only the first). A seat with `kind: external` reads judgements an external judge already made instead of calling a model ([External seats](#external-seats)).'),
    consolidator: ParticipantConfig.optional().describe('Phase 2 seat of mode `consolidation` (required there): merges the jurors\' findings into one verdict.'),
    moderator: ParticipantConfig.optional().describe('Seat that runs the discussion of mode `deliberation` (required there); it never sees the trace.'),
    mode: JuryMode.default('consolidation').describe('Phase 2: `single` (the first juror alone), `union` (every finding of any juror), `majority` (findings of strictly more than half of the jurors that succeeded), `consolidation` (the consolidator merges the findings), `deliberation` (a moderated discussion, docs/deliberation.md).'),
    min_jurors: z.int().positive().optional().describe('Phase 1 must have at least this many successful jurors, else the record gets no verdict (`error`). Absent: half of the seated jurors, rounded up.'),
    budget_usd: z
      .number()
      .positive()
      .optional()
      .describe('Spending cap of the run, in USD of `prices`, counted over the whole output (cumulative across resumes): the cost recorded on its committed verdicts and `repairs` rows (retries and their re-judging; each range\'s manifest keeps the sum) plus what this invocation has judged and retried. Once reached, no new record is read; records in flight finish, their ranges commit, and the summary says why. Raise it and run the same command again to continue. Calls of unpriced models count 0; taxonomy calls are not counted. `--budget-usd` overrides it (operational, not in config_hash).'),
    budget_tokens: z
      .int()
      .positive()
      .optional()
      .describe('Token cap of the run (tokens in + out of the jury\'s calls and of `repair`\'s retries and re-judging, cached replies included), counted like `budget_usd`: over the whole output, across resumes. `--budget-tokens` overrides it (operational, not in config_hash).'),
    phase1_timeout_ms: z.int().positive().default(600_000).describe('Wall-clock ceiling on each Phase 1 juror of a record (App. F); time its call waits in our own queue (`max_concurrency`, `requests_per_second`) and time an endpoint spends down do not count.'),
    max_outage_ms: z
      .int()
      .positive()
      .default(1_800_000)
      .describe('Longest an endpoint may stay down (see `endpoints.*.breaker`) while the run waits for it, intake paused. Beyond it the run stops with one line naming the endpoint and a non-zero exit; records still waiting are not committed, so the next run judges them. `--max-outage` overrides it (operational, not in config_hash).'),
    // Optional rather than defaulted so configs without it keep their config_hash (it is operational anyway).
    batch: z
      .object({ enabled: z.boolean().default(false).describe('Batch mode: model calls of endpoints whose `batch.dialect` is not `none` go out in batches instead of one HTTP request each: through the endpoint\'s Batch API (half price on OpenAI, results within `completion_window`) or its `batch.command` (offline). `run --batch` turns it on for one run. Not with `mode: deliberation` nor kafka:// input (docs/batch.md).') })
      .strict()
      .optional()
      .describe('Batch inference (operational, not in config_hash; docs/batch.md).'),
    preflight: z.boolean().default(true).describe('Before `run` reads any input, one tiny real call per distinct endpoint and model of the seats checks the key, the model name and the structured-output dialect; a fault stops the run with one line (exit 3) before anything is judged, and a server that does not answer yet is waited for up to `max_outage_ms`. `false` (or `run --no-preflight`) skips it (operational, not in config_hash).'),
    propagation: z.boolean().default(true).describe('Include the defect-propagation rule in the auditor prompt: steps built on an error are flagged with the same severity (paper default: on).'),
    severity_threshold: Impact.default('minor').describe('Lowest defect severity that labels a step erroneous in the `steps` table (`neutral` < `minor` < `major` < `fatal`).'),
    segmentation: SegmentationConfig.default({ mode: 'auto', max_steps: DEFAULT_MAX_STEPS }),
    prices: z.record(z.string(), PriceConfig).default({}).describe('USD per million tokens by model name, for the ledger and the `cost_usd` columns. A model missing here is warned about once at start, its calls have `cost_usd` null (unknown, not 0), and the run summary names it.'),
    cache: z
      .object({
        enabled: z.boolean().default(true).describe('Replay identical model calls from disk: a re-run with the same seats and prompts makes no model calls. `--no-cache` turns it off for one run.'),
        dir: z.string().default('.cache/responses').describe('Folder of cached replies, keyed by endpoint URL, model, sampling and prompt. Relative to the config file when the file sets it; the default is under the working directory.'),
      })
      .strict()
      .default({ enabled: true, dir: '.cache/responses' })
      .describe('Response cache (operational, not in config_hash).'),
    audit_log: z
      .object({ path: z.string().nullable().default(null).describe('JSONL file that every model call is appended to (prompt, reply, usage, outcome); `null`: none. `--audit-log` overrides it. A relative path is relative to the config file.') })
      .strict()
      .default({ path: null })
      .describe('Audit log of model calls (operational, not in config_hash).'),
    // Optional rather than defaulted so configs without it keep their config_hash.
    verdict_details: VerdictDetails.optional().describe('Write the `verdict_details` table (Phase 1 judgements, transcript, dissent, termination; docs/tables.md): `auto` (absent) in deliberation mode or with a verification pass on (`removal_pass`, `arbiter`), `on` in every mode, `off` never. `--verdict-details` overrides it (operational, not in config_hash).'),
    filter: FilterPolicy.default({ rules: DEFAULT_FILTER_RULES as FilterRule[], default: 'keep' }),
    prompts_dir: z.string().optional().describe('Folder of prompt templates overriding the shipped ones (same file names, see `prompts/`); a template missing there comes from the shipped set. A relative path is relative to the config file. It must exist.'),
    input: z
      .object({
        mapping: FieldMapping.default(FieldMapping.parse({})),
        // Optional rather than defaulted so configs without them keep their config_hash.
        duplicate_ids: DuplicateIdPolicy.optional().describe(
          'A record_id seen again within one run: `dead_letter` (default) makes each later copy a dead letter "duplicate record_id ... (first seen at <unit>:<offset>)", unjudged; `keep_first` drops later copies unjudged and lists them in their range\'s manifest (`duplicates`); `keep_all` judges every copy. `--duplicate-ids` overrides it.',
        ),
        on_changed_input: ChangedInputPolicy.optional().describe(
          'A file or object whose records no longer match what a committed range recorded of them (edited in place): `error` (default) stops the run with one line naming the file and the records; `rejudge` removes that range and the file\'s later ranges from the output and judges them again. `--on-changed-input` overrides it.',
        ),
      })
      .strict()
      .default({ mapping: FieldMapping.parse({}) })
      .describe('How input rows become trace records.'),
    // Optional rather than defaulted so configs without it keep their config_hash.
    max_tokens: MaxTokensConfig.optional(),
    // Optional rather than defaulted so configs without it keep their config_hash.
    taxonomy: TaxonomyConfig.optional(),
    // Optional rather than defaulted so configs without it keep their config_hash.
    deliberation: DeliberationConfig.optional(),
    // Optional rather than defaulted so configs without it keep their config_hash.
    phase1: Phase1Config.optional(),
    // Optional rather than defaulted so configs without them keep their config_hash.
    removal_pass: RemovalPassConfig.optional(),
    arbiter: ArbiterConfig.optional(),
    grounding: GroundingConfig.optional(),
    // Optional rather than defaulted so configs without it keep their config_hash.
    repair: RepairConfig.optional(),
    kafka: KafkaConfig.optional(),
    s3: S3Config.optional(),
    output: OutputConfig.prefault({}),
  })
  .strict()
  .superRefine((c, ctx) => {
    const seats: Array<[string, { endpoint: string } | undefined]> = [
      ...c.jurors.map((j, i) => [`jurors.${i}`, j.kind === 'external' ? undefined : j] as [string, { endpoint: string } | undefined]),
      ['consolidator', c.consolidator],
      ['moderator', c.moderator],
      ['taxonomy.assigner', c.taxonomy?.assigner],
      ['taxonomy.inducer', c.taxonomy?.inducer],
      ['removal_pass.seat', c.removal_pass?.seat],
      ['arbiter.seat', c.arbiter?.seat],
      ['grounding.checker.seat', c.grounding?.checker?.seat],
      ['repair.generator', c.repair?.generator],
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
    if (c.phase1?.strategy === 'cascade' && c.mode === 'single') ctx.addIssue({ code: 'custom', path: ['phase1', 'strategy'], message: 'a cascade needs a mode that seats several jurors (mode "single" calls only the first)' });
    if (c.phase1?.strategy === 'cascade') cascadeIssues(c.phase1.cascade, c.jurors.length, ctx);
    if (c.min_jurors !== undefined && c.min_jurors > c.jurors.length) ctx.addIssue({ code: 'custom', path: ['min_jurors'], message: `is ${c.min_jurors} but only ${c.jurors.length} jurors are configured` });
  });
export type JuryConfig = z.infer<typeof JuryConfig>;
export type JuryConfigInput = z.input<typeof JuryConfig>;
