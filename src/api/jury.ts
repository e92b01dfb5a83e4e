/**
 * `createJury`: one config, one set of model clients (and simulators for `kind: simulator`
 * endpoints), and the stage's own steps run on one record at a time (./jury-core.ts).
 */
import { callingSeats } from '../compose/seats.js';
import { configLabel, loadConfig } from './config.js';
import { goldInput, juryOver } from './jury-core.js';
import { openJury } from './open-jury.js';
import type { ConfigSource, Jury, JuryOptions } from './types.js';

/** Opens a jury over a config; with `preflight`, a refused key or an unknown model fails here. */
export async function createJury(source: ConfigSource, options: JuryOptions = {}): Promise<Jury> {
  const config = loadConfig(source);
  const runtime = await openJury(config, { config: configLabel(source) }, goldInput(options.simulatorGold));
  try {
    if (options.preflight ?? config.preflight) await runtime.gateway.preflight(callingSeats(config));
  } catch (err) {
    await runtime.close();
    throw err;
  }
  return juryOver(config, runtime);
}

