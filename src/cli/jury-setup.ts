import type { JuryConfig } from '../../schemas/config.js';
import { defaultConfig, loadConfigFile } from '../config/load.js';
import { openRuntime, type Runtime } from '../compose/runtime.js';

export interface JuryOptions {
  config?: string;
  gold?: string;
  auditLog?: string;
  cache?: boolean;
}

/** The config named by --config, or the embedded default, with command-line overrides applied. */
export function loadJuryConfig(opts: JuryOptions): JuryConfig {
  const config = opts.config ? loadConfigFile(opts.config) : defaultConfig();
  return opts.cache === false ? { ...config, cache: { ...config.cache, enabled: false } } : config;
}

/** Open the runtime for a loaded config; says on stderr which simulators stand in for models. */
export async function openJury(config: JuryConfig, opts: JuryOptions): Promise<Runtime> {
  const runtime = await openRuntime({ config, ...(opts.gold ? { goldFile: opts.gold } : {}), ...(opts.auditLog ? { auditLogPath: opts.auditLog } : {}) });
  if (!opts.config) {
    const url = runtime.simulators[0]?.url ?? '?';
    process.stderr.write(`reasoning-jury: no --config given, using the embedded default jury: 3 simulated jurors + consolidation, served in-process at ${url} (not real models)\n`);
  } else {
    for (const s of runtime.simulators) process.stderr.write(`reasoning-jury: endpoint "${s.endpoint}" is the juror simulator, served in-process at ${s.url} (not a real model)\n`);
  }
  return runtime;
}

/** Options every judging command shares. */
export const JURY_OPTION_HELP = {
  config: 'jury config (YAML or JSON); without it, 3 simulated jurors + consolidation run in-process',
  gold: 'JSONL of labelled records that simulated endpoints grade against (labels in the input are used too)',
  auditLog: 'append every model call to this JSONL audit log (overrides audit_log.path)',
  cache: 'do not read or write the response cache',
};
