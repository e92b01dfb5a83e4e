/**
 * Config loading and jury opening, shared by the commands (src/cli) and the library
 * (src/api/index.ts): one way to read a config and to plug in simulated endpoints.
 */
import type { JuryConfig } from '../../schemas/config.js';
import type { TraceRecord } from '../../schemas/trace.js';
import { defaultConfig, loadConfigFile } from '../config/load.js';
import type { Runtime, RuntimeOptions } from '../compose/runtime.js';
import { applyConfigFlags, type ConfigFlagValues } from './config-flags.js';
import { logger } from '../util/log.js';

const log = logger('cli');

/** The options every judging entry point shares: the CLI's --config, --gold, --audit-log, --no-cache. */
export interface JuryOptions {
  /** a config file (YAML or JSON); absent: the embedded default jury of simulated seats */
  config?: string;
  /** JSONL of labelled records that simulated endpoints grade against */
  gold?: string;
  auditLog?: string;
  cache?: boolean;
}

/** What the command reads, for simulated endpoints to take gold labels from (besides --gold). */
export interface JuryInput {
  /** a local input file or folder (JSONL/Parquet); not a kafka:// or s3:// URL */
  input?: string;
  /** records the command judges itself (judge, eval) */
  records?: readonly TraceRecord[];
}

/** The config named by --config, or the embedded default, with the flags that override its keys applied (src/api/config-flags.ts). */
export function loadJuryConfig(opts: JuryOptions & ConfigFlagValues): JuryConfig {
  return applyConfigFlags(opts.config ? loadConfigFile(opts.config) : defaultConfig(), opts);
}

function hasSimulator(config: JuryConfig): boolean {
  return Object.values(config.endpoints).some((e) => e.kind === 'simulator');
}

/**
 * Open the runtime for a loaded config. `kind: simulator` endpoints get a juror simulator each,
 * started here, graded against --gold and the labelled records of `from`, and stopped when the
 * runtime closes; says on stderr which simulators stand in for models.
 */
export async function openJury(config: JuryConfig, opts: JuryOptions, from: JuryInput = {}, extra: Pick<RuntimeOptions, 'observer' | 'auditLogPath' | 'batchJournal'> = {}): Promise<Runtime> {
  // --audit-log reached the config with the other flags (loadJuryConfig).
  const base: RuntimeOptions = { config, ...extra };
  // The runtime (model clients, Arrow, the jury) loads when a command opens a jury, not when it is
  // registered: `shards`, `decide` or `--help` would otherwise pay ~0.8 s of CPU for modules they never use.
  const { openRuntime } = await import('../compose/runtime.js');
  if (!hasSimulator(config)) {
    if (opts.gold) log.warn('--gold is only read by simulated endpoints, and the config has none');
    return openRuntime(base);
  }
  // Loaded only here, so a jury of real endpoints never loads (or feeds) the simulator.
  const { simulatorGold, startSimulators } = await import('./simulators.js');
  const gold = await simulatorGold(config, { goldFile: opts.gold, input: from.input, records: from.records });
  const sims = await startSimulators(config, gold);
  let runtime: Runtime;
  try {
    runtime = await openRuntime({ ...base, served: sims.served, onClose: sims.close });
  } catch (err) {
    await sims.close();
    throw err;
  }
  if (!opts.config) {
    const url = sims.running[0]?.url ?? '?';
    log.info(`no --config given, using the embedded default jury: 3 simulated jurors + consolidation, served in-process at ${url} (not real models)`);
  } else {
    for (const s of sims.running) log.info(`endpoint "${s.endpoint}" is the juror simulator, served in-process at ${s.url} (not a real model)`, { endpoint: s.endpoint });
  }
  return runtime;
}
