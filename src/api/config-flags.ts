/**
 * Command-line flags (and the API's options of the same name) that stand in for one config key each, and the one place that decides
 * which wins: the flag when given, else the config's key, else the built-in default. Each row
 * says how its flag is declared, parsed (a bad value is one line naming the flag) and which key
 * it overrides, so `run`, the judging commands and the docs read one table. Types only from
 * schemas: the main thread parses flags without loading them.
 */
import type { ChangedInputPolicy, DuplicateIdPolicy, JuryConfig, VerdictDetails } from '../../schemas/config.js';
import { parseDurationFlag, UsageError } from './usage.js';

/** What the flags gave, as plain data (it crosses to the judging thread); absent: not given. */
export interface ConfigFlagValues {
  /** --corpus: output.corpus (enabled and format) */
  corpus?: 'parquet' | 'jsonl' | 'off';
  /** --table-format: output.table_format */
  tableFormat?: 'none' | 'delta';
  /** --on-changed-input: input.on_changed_input */
  onChangedInput?: ChangedInputPolicy;
  /** --duplicate-ids: input.duplicate_ids */
  duplicateIds?: DuplicateIdPolicy;
  /** --max-outage: max_outage_ms */
  maxOutageMs?: number;
  /** --verdict-details: verdict_details */
  verdictDetails?: VerdictDetails;
  /** --budget-usd / --budget-tokens: budget_usd / budget_tokens */
  budgetUsd?: number;
  budgetTokens?: number;
  /** --no-preflight: preflight (false skips it) */
  preflight?: boolean;
  /** --no-cache: cache.enabled */
  cache?: boolean;
  /** --audit-log: audit_log.path */
  auditLog?: string;
  /** --batch: batch.enabled */
  batch?: boolean;
}

export type ConfigFlagName = keyof ConfigFlagValues;

/** What a run goes by once flag and config are weighed (undefined: no cap). */
export interface Settled {
  corpus: 'parquet' | 'jsonl' | 'off';
  tableFormat: 'none' | 'delta';
  onChangedInput: ChangedInputPolicy;
  duplicateIds: DuplicateIdPolicy;
  maxOutageMs: number;
  verdictDetails: VerdictDetails | undefined;
  budgetUsd: number | undefined;
  budgetTokens: number | undefined;
  preflight: boolean;
  cache: boolean;
  auditLog: string | undefined;
  batch: boolean;
}
type Value<K extends ConfigFlagName> = Exclude<ConfigFlagValues[K], undefined>;

export interface ConfigFlag<K extends ConfigFlagName> {
  /** the option as commander declares it */
  option: string;
  help: string;
  /** the config key it overrides, as messages name it */
  key: string;
  /** the flag's text as a value; absent for a `--no-` switch, which can only say false */
  parse?(text: string): Value<K>;
  /** what the config says, with the built-in default when it says nothing */
  configured(config: JuryConfig): Settled[K];
  /** writes the value where the rest of the command reads it from the config */
  apply?(config: JuryConfig, value: Value<K>): JuryConfig;
}

function oneOf<T extends string>(options: readonly T[], flag: string, said = options.join(' | ')): (v: string) => T {
  return (v) => {
    if (!(options as readonly string[]).includes(v)) throw new UsageError(`${flag} must be ${said} (got "${v}")`);
    return v as T;
  };
}

function positiveInt(flag: string): (v: string) => number {
  return (v) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} must be a positive integer (got "${v}")`);
    return n;
  };
}

function usd(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`--budget-usd must be a positive number of US dollars (got "${v}")`);
  return n;
}

// Literal lists (not the zod enums): this thread must not load the schemas just to parse flags.
const CHANGED_INPUT = ['error', 'rejudge'] as const satisfies readonly ChangedInputPolicy[];
const DUPLICATE_IDS = ['dead_letter', 'keep_first', 'keep_all'] as const satisfies readonly DuplicateIdPolicy[];
const VERDICT_DETAILS = ['auto', 'on', 'off'] as const satisfies readonly VerdictDetails[];
const CORPUS = ['parquet', 'jsonl', 'off'] as const;
const TABLE_FORMAT = ['none', 'delta'] as const;

/** Every flag that overrides a config key, by the option name commander gives it. */
export const CONFIG_FLAGS: { [K in ConfigFlagName]-?: ConfigFlag<K> } = {
  verdictDetails: {
    option: '--verdict-details <when>',
    help: 'auto | on | off: write the verdict_details table (Phase 1 judgements, transcript, dissent, pass results); auto = deliberation mode or a verification pass on (default: verdict_details of the config, else auto)',
    key: 'verdict_details',
    parse: oneOf(VERDICT_DETAILS, '--verdict-details', 'auto, on or off'),
    configured: (c) => c.verdict_details,
    apply: (c, v) => ({ ...c, verdict_details: v }),
  },
  corpus: {
    option: '--corpus <format>',
    help: 'curated corpus as parquet | jsonl | off (default: output.corpus of the config, parquet)',
    key: 'output.corpus',
    parse: oneOf(CORPUS, '--corpus', 'parquet, jsonl or off'),
    configured: (c) => (c.output.corpus.enabled ? c.output.corpus.format : 'off'),
  },
  tableFormat: {
    option: '--table-format <format>',
    help: 'delta: also keep a Delta Lake log in each Parquet table folder, one commit per range (docs/tables.md) | none (default: output.table_format of the config, none)',
    key: 'output.table_format',
    parse: oneOf(TABLE_FORMAT, '--table-format', 'delta or none'),
    configured: (c) => c.output.table_format,
  },
  onChangedInput: {
    option: '--on-changed-input <mode>',
    help: 'a committed input file whose records changed since: error (stop with one line) | rejudge (retract its changed ranges and judge them again); default input.on_changed_input, else error',
    key: 'input.on_changed_input',
    parse: oneOf(CHANGED_INPUT, '--on-changed-input'),
    configured: (c) => c.input.on_changed_input ?? 'error',
  },
  duplicateIds: {
    option: '--duplicate-ids <policy>',
    help: 'a record_id seen again in this run: dead_letter | keep_first | keep_all; default input.duplicate_ids, else dead_letter',
    key: 'input.duplicate_ids',
    parse: oneOf(DUPLICATE_IDS, '--duplicate-ids'),
    configured: (c) => c.input.duplicate_ids ?? 'dead_letter',
  },
  budgetUsd: {
    option: '--budget-usd <usd>',
    help: 'stop reading records once the output\'s judged records cost this much (USD of the config\'s prices, counted across resumes); default budget_usd of the config, else no cap',
    key: 'budget_usd',
    parse: usd,
    configured: (c) => c.budget_usd,
  },
  budgetTokens: {
    option: '--budget-tokens <n>',
    help: 'stop reading records once the output\'s judged records used this many tokens (in + out, counted across resumes); default budget_tokens of the config, else no cap',
    key: 'budget_tokens',
    parse: positiveInt('--budget-tokens'),
    configured: (c) => c.budget_tokens,
  },
  preflight: {
    option: '--no-preflight',
    help: 'skip the check before reading input: one tiny real call per distinct endpoint and model (key, model name, structured-output dialect); default: preflight of the config, on',
    key: 'preflight',
    configured: (c) => c.preflight,
  },
  maxOutageMs: {
    option: '--max-outage <duration>',
    help: 'longest an endpoint may stay down while the run waits for it, e.g. 90s, 30m, 2h (default: max_outage_ms of the config, 30m); beyond it the run stops with exit code 3',
    key: 'max_outage_ms',
    parse: (v) => parseDurationFlag(v, '--max-outage'),
    configured: (c) => c.max_outage_ms,
    apply: (c, v) => ({ ...c, max_outage_ms: v }),
  },
  cache: {
    option: '--no-cache',
    help: 'do not read or write the response cache',
    key: 'cache.enabled',
    configured: (c) => c.cache.enabled,
    apply: (c, v) => ({ ...c, cache: { ...c.cache, enabled: v } }),
  },
  batch: {
    option: '--batch',
    help: 'batch mode: model calls go out in batches, through each endpoint\'s Batch API (half price on OpenAI, results within its completion window) or its batch.command (offline, e.g. vllm run-batch); docs/batch.md; default: batch.enabled of the config, off',
    key: 'batch.enabled',
    parse: () => true,
    configured: (c) => c.batch?.enabled ?? false,
    apply: (c, v) => ({ ...c, batch: { ...c.batch, enabled: v } }),
  },
  auditLog: {
    option: '--audit-log <file>',
    help: 'append every model call to this JSONL audit log (overrides audit_log.path)',
    key: 'audit_log.path',
    parse: (v) => v,
    configured: (c) => c.audit_log.path ?? undefined,
    apply: (c, v) => ({ ...c, audit_log: { ...c.audit_log, path: v } }),
  },
};

/**
 * The value a flag gave, or undefined when it was not given. Commander hands a `--no-` switch
 * over as true when it was not given, so only its false counts.
 */
function given<K extends ConfigFlagName>(values: ConfigFlagValues, name: K): Value<K> | undefined {
  const value = values[name];
  if (value === undefined || (!CONFIG_FLAGS[name].parse && value !== false)) return undefined;
  return value as Value<K>;
}

/** The precedence: the flag when given, else the config's key (with its default). */
export function setting<K extends ConfigFlagName>(values: ConfigFlagValues, config: JuryConfig, name: K): Settled[K] {
  return (given(values, name) ?? CONFIG_FLAGS[name].configured(config)) as Settled[K];
}

/** Which of the two a setting came from, as a message names it: the flag, or the config key. */
export function settingSource(values: ConfigFlagValues, name: ConfigFlagName): string {
  return given(values, name) !== undefined ? CONFIG_FLAGS[name].option.split(' ')[0]! : CONFIG_FLAGS[name].key;
}

/** The config with every given flag written to its key, for what the command reads from the config itself. */
export function applyConfigFlags(config: JuryConfig, values: ConfigFlagValues): JuryConfig {
  let out = config;
  for (const name of Object.keys(CONFIG_FLAGS) as ConfigFlagName[]) {
    const row = CONFIG_FLAGS[name] as ConfigFlag<ConfigFlagName>;
    const value = given(values, name);
    if (row.apply && value !== undefined) out = row.apply(out, value as never);
  }
  return out;
}
