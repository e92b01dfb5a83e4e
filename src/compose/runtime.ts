import { isExternalSeat, type EndpointConfig, type JuryConfig } from '../../schemas/config.js';
import { configHash } from '../config/load.js';
import { phase1Admission } from '../jury/admission.js';
import type { JuryContext } from '../jury/judge.js';
import type { JuryRuntime } from '../jury/runtime.js';
import { createGateway } from '../llm/gateway.js';
import { unpricedModels } from '../llm/ledger.js';
import { logger } from '../util/log.js';
import { callingSeats } from './seats.js';
import type { GatewayObserver } from '../llm/observer.js';
import { providerKind } from '../llm/providers/index.js';
import { BATCH_DEFAULTS, batchProviderFor, memoryJournal, sumStats, takesBatches, type BatchProvider, type BatchStats, type JournalStore } from '../llm/providers/batch/index.js';
import type { Provider } from '../llm/types.js';
import { loadPromptSet, REPAIR_TEMPLATES, type TemplateName } from '../prompts/templates.js';

/** Builds the provider that serves one endpoint. */
export type ProviderFactory = (name: string, endpoint: EndpointConfig) => Provider;

export interface RuntimeOptions {
  config: JuryConfig;
  /** Override the audit log path from the config. */
  auditLogPath?: string | null;
  /**
   * Swap the provider of every endpoint (benchmarks use in-process instant jurors); nothing is
   * resolved for the endpoints then. Default: `defaultProviderFor`.
   */
  providerFor?: ProviderFactory;
  /**
   * Endpoints the caller serves itself, with the settings that reach them (the CLI starts a
   * server per `kind: simulator` endpoint and gives its base_url here); they replace the
   * config's entries, and are reached through the default providers like any other endpoint.
   */
  served?: Readonly<Record<string, EndpointConfig>>;
  /** Runs once the gateway has closed: stops what the caller started for `served`. */
  onClose?: () => Promise<void>;
  /** Told of every model attempt and call (`run --metrics-port`). */
  observer?: GatewayObserver;
  /**
   * Where batch mode keeps its journal (the output's store, so a re-run re-attaches to pending
   * batches); absent: kept in memory. Read only when `config.batch.enabled`.
   */
  batchJournal?: JournalStore;
}

/** The Phase 1 ceiling in batch mode: a juror's call waits for its batch, which may take a day. */
const BATCH_PHASE1_CEILING_MS = 48 * 3600_000;

/** What a command holds while it judges (the interface lives with the jury, which offline jobs may use). */
export type { JuryRuntime as Runtime } from '../jury/runtime.js';

/**
 * The endpoint settings the gateway gets: served ones as given, the rest as their kind prepares
 * them (local models resolved). In batch mode a batched endpoint's calls all wait at once for
 * their batch, so its limiter and Phase 1 admission let a whole batch be outstanding.
 */
function gatewayEndpoints(opts: RuntimeOptions): Record<string, EndpointConfig> {
  const endpoints: Record<string, EndpointConfig> = {};
  for (const [name, ep] of Object.entries(opts.config.endpoints)) {
    const served = opts.served && Object.hasOwn(opts.served, name) ? opts.served[name] : undefined;
    const prepare = opts.providerFor ? undefined : providerKind(ep.kind).prepare;
    let e = served && !opts.providerFor ? served : prepare ? prepare(name, ep) : ep;
    if (batchMode(opts.config) && takesBatches(e)) e = { ...e, max_concurrency: Math.max(e.max_concurrency, batchSlots(opts.config, name, e)) };
    endpoints[name] = e;
  }
  return endpoints;
}

const batchMode = (config: JuryConfig): boolean => config.batch?.enabled === true;

/**
 * Calls a batched endpoint may hold at once: a full batch per model on it, since each model has
 * a collector of its own (three jurors on one endpoint fill three batches side by side).
 */
export function batchSlots(config: JuryConfig, endpoint: string, ep: EndpointConfig): number {
  const models = new Set(callingSeats(config).filter((s) => s.endpoint === endpoint).map((s) => s.model));
  return Math.max(1, models.size) * (ep.batch?.max_requests ?? BATCH_DEFAULTS.max_requests);
}

/** The providers of a run: in batch mode a batched endpoint's is its batch provider, whose stats the runtime adds up. */
function providersOf(opts: RuntimeOptions): { providerFor: ProviderFactory; batchStats?: () => BatchStats } {
  const online = opts.providerFor ?? defaultProviderFor;
  if (!batchMode(opts.config) || opts.providerFor) return { providerFor: online };
  const journal = opts.batchJournal ?? memoryJournal();
  const batched: BatchProvider[] = [];
  const providerFor: ProviderFactory = (name, ep) => {
    if (!takesBatches(ep)) return online(name, ep);
    const p = batchProviderFor(name, ep, journal);
    batched.push(p);
    return p;
  };
  return { providerFor, batchStats: () => sumStats(batched.map((p) => p.stats())) };
}

/**
 * Everything a command needs to judge records: the gateway over the config's endpoints and the
 * prompt set. What stands behind an endpoint is the caller's business (see `served`).
 */
export async function openRuntime(opts: RuntimeOptions): Promise<JuryRuntime> {
  const { config } = opts;
  // Before the gateway opens: an unreadable external source stops the command with nothing to close.
  // Loaded only when a seat reads one: the reader pulls in the Parquet decompressors
  // (hyparquet-compressors: brotli tables, a snappy WebAssembly module), which otherwise only
  // Parquet input needs, and that source loads them itself.
  const external = config.jurors.some(isExternalSeat) ? await (await import('./external-sources.js')).loadExternalSources(config) : undefined;
  // Once per model, before any call: the rows will say null (unknown), never a silent $0.
  for (const model of unpricedModels(config)) logger('ledger').warn(`model "${model}" has no price under prices: cost_usd of its calls is null (unknown), not 0`, { model });
  warnUnsetKeys(config);
  const endpoints = gatewayEndpoints(opts);
  const providers = providersOf(opts);
  const gateway = createGateway({
    endpoints,
    prices: config.prices,
    cache: config.cache,
    auditLogPath: opts.auditLogPath !== undefined ? opts.auditLogPath : config.audit_log.path,
    providerFor: providers.providerFor,
    ...(opts.observer ? { observer: opts.observer } : {}),
    maxOutageMs: config.max_outage_ms,
    ...(config.max_tokens ? { maxTokens: config.max_tokens } : {}),
  });
  // Records start Phase 1 as fast as the endpoints serve it, so calls do not pile up in our limiter.
  const admission = phase1Admission((name) => (Object.hasOwn(endpoints, name) ? endpoints[name]!.max_concurrency : undefined));
  // The config hash is the config's own: batch mode changes how calls travel, not what a verdict is.
  const juryConfig = providers.batchStats ? { ...config, phase1_timeout_ms: Math.max(config.phase1_timeout_ms, BATCH_PHASE1_CEILING_MS) } : config;
  const jury: JuryContext = { config: juryConfig, gateway, prompts: loadPromptSet(config.prompts_dir, passTemplates(config)), configHash: configHash(config), downMs: gateway.health.downMs, admission, ...(external ? { external } : {}) };
  return {
    jury,
    gateway,
    health: gateway.health,
    ...(providers.batchStats ? { batchStats: providers.batchStats } : {}),
    async close() {
      try {
        await gateway.close();
      } finally {
        await opts.onClose?.();
      }
    },
  };
}

/**
 * An api_key_env naming an unset variable is most often a shell that was not given the key: say
 * so at start. A placeholder key is still sent (an unsecured server needs none); a server that
 * refuses it stops the run with one line naming the variable (src/llm/fault-message.ts).
 */
function warnUnsetKeys(config: JuryConfig, env: NodeJS.ProcessEnv = process.env): void {
  for (const [name, ep] of Object.entries(config.endpoints)) {
    if (!providerKind(ep.kind).sendsKey || !ep.api_key_env || env[ep.api_key_env]) continue;
    logger('llm').warn(`endpoint "${name}": ${ep.api_key_env} (named by endpoints.${name}.api_key_env) is not set; sending a placeholder key, which only a server without authentication accepts`, { endpoint: name, variable: ep.api_key_env });
  }
}

/** The provider registered for the endpoint's kind (src/llm/providers/). */
export function defaultProviderFor(name: string, endpoint: EndpointConfig): Provider {
  return providerKind(endpoint.kind).create(name, endpoint);
}

/** The opt-in pass templates this config uses (they enter the prompt hash only then). */
function passTemplates(config: JuryConfig): ReadonlySet<TemplateName> {
  const used = new Set<TemplateName>();
  if (config.removal_pass?.enabled) used.add('removal.user');
  if (config.arbiter?.enabled) used.add('arbiter.user');
  const checker = config.mode === 'deliberation' && config.grounding && config.grounding.policy !== 'off' ? config.grounding.checker : undefined;
  if (checker?.enabled) used.add('grounding.note');
  if (checker?.enabled && checker.model) used.add('grounding-check.user');
  if (config.repair?.enabled) for (const t of REPAIR_TEMPLATES) used.add(t);
  return used;
}
