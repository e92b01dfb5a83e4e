import type { EndpointConfig, JuryConfig } from '../../schemas/config.js';
import type { TraceRecord } from '../../schemas/trace.js';
import { configHash } from '../config/load.js';
import type { JuryContext } from '../jury/judge.js';
import { createGateway, type Gateway } from '../llm/gateway.js';
import { createLocalProvider } from '../llm/local-provider.js';
import { createOpenAIProvider } from '../llm/openai-provider.js';
import { resolveModelPath } from '../models/cache.js';
import type { Provider } from '../llm/types.js';
import { loadPromptSet } from '../prompts/templates.js';
import { defaultProfile, loadGoldFile, loadProfileFile, NO_GOLD, startSimulator, type RunningSimulator } from '../sim/index.js';
import { LiveGoldIndex } from '../sim/live-gold.js';

export interface RuntimeOptions {
  config: JuryConfig;
  /** JSONL of labelled records for simulated endpoints (besides labels seen in the input). */
  goldFile?: string;
  /** Override the audit log path from the config. */
  auditLogPath?: string | null;
  /** Swap the provider of every endpoint (benchmarks use in-process instant jurors). */
  providerFor?: (name: string, endpoint: EndpointConfig) => Provider;
}

export interface Runtime {
  jury: JuryContext;
  gateway: Gateway;
  /** Simulators started in-process for `kind: simulator` endpoints. */
  simulators: Array<{ endpoint: string; url: string; server: RunningSimulator }>;
  /** Let simulated jurors know a record's gold labels (no-op without simulators). */
  observe(record: TraceRecord): void;
  forget(record: TraceRecord): void;
  close(): Promise<void>;
}

/**
 * Everything a command needs to judge records: simulators started for simulated endpoints (over
 * real loopback HTTP, so the real openai client is exercised), the gateway, and the prompt set.
 */
export async function openRuntime(opts: RuntimeOptions): Promise<Runtime> {
  const { config } = opts;
  const gold = new LiveGoldIndex(opts.goldFile ? loadGoldFile(opts.goldFile, { mode: config.segmentation.mode }) : NO_GOLD, config.segmentation.mode);
  const simulators: Runtime['simulators'] = [];
  const endpoints: Record<string, EndpointConfig> = {};
  try {
    for (const [name, ep] of Object.entries(config.endpoints)) {
      if (ep.kind === 'simulator' && !opts.providerFor) {
        const profile = ep.profile ? loadProfileFile(ep.profile) : defaultProfile();
        const server = await startSimulator({ profile, gold });
        simulators.push({ endpoint: name, url: server.url, server });
        endpoints[name] = { ...ep, base_url: server.url };
      } else if (ep.kind === 'local' && !opts.providerFor) {
        // A missing model fails here, with how to fetch it, rather than in every juror's call.
        endpoints[name] = { ...ep, model_path: resolveModelPath(ep.model_path!) };
      } else endpoints[name] = ep;
    }
  } catch (err) {
    await Promise.all(simulators.map((s) => s.server.close()));
    throw err;
  }
  const gateway = createGateway({
    endpoints,
    prices: config.prices,
    cache: config.cache,
    auditLogPath: opts.auditLogPath !== undefined ? opts.auditLogPath : config.audit_log.path,
    providerFor: opts.providerFor ?? defaultProviderFor,
  });
  const jury: JuryContext = { config, gateway, prompts: loadPromptSet(config.prompts_dir), configHash: configHash(config) };
  return {
    jury,
    gateway,
    simulators,
    observe: (r) => gold.add(r),
    forget: (r) => gold.forget(r),
    async close() {
      await gateway.close();
      await Promise.all(simulators.map((s) => s.server.close()));
    },
  };
}

/** `kind: local` runs in this process; every other endpoint (simulators included) speaks HTTP. */
function defaultProviderFor(name: string, endpoint: EndpointConfig): Provider {
  return endpoint.kind === 'local' ? createLocalProvider(name, endpoint) : createOpenAIProvider(name, endpoint);
}
