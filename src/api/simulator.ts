/**
 * The juror simulator for a caller's own tests: an OpenAI-compatible server on loopback that
 * plays jurors and the consolidator, the same one `kind: simulator` endpoints start. Point an
 * endpoint's `base_url` at its `url` (kind `openai`), or use `kind: simulator` and let the jury
 * start one itself. Loaded only when called: a jury of real endpoints never loads it.
 */
import { defaultConfig } from '../config/load.js';
import type { SimulatorGold } from './types.js';

export interface SimulatorOptions {
  /**
   * A profile file (YAML or JSON, as `endpoints.<name>.profile` names one) or the object it
   * holds: per-model recall, false-positive rate, latency and faults (examples/sim-profile.yaml).
   * Default: the built-in profile.
   */
  profile?: string | Record<string, unknown>;
  /** labelled records (or a local file or folder of them) the simulated jurors grade against */
  gold?: SimulatorGold;
  /** 0 (default): any free port */
  port?: number;
}

export interface JurySimulator {
  /** base URL for an OpenAI-compatible client, ending in /v1 */
  readonly url: string;
  /** chat calls served so far */
  calls(): number;
  /** stops listening and drops open connections */
  close(): Promise<void>;
}

export async function startJurySimulator(options: SimulatorOptions = {}): Promise<JurySimulator> {
  const sim = await import('../sim/index.js');
  const { simulatorGold } = await import('./simulators.js');
  const profile = options.profile === undefined ? sim.defaultProfile() : typeof options.profile === 'string' ? sim.loadProfileFile(options.profile) : sim.parseProfile(options.profile);
  const gold = options.gold === undefined ? sim.NO_GOLD : await simulatorGold(defaultConfig(), typeof options.gold === 'string' ? { input: options.gold } : { records: options.gold });
  const server = await sim.startSimulator({ profile, gold, ...(options.port !== undefined ? { port: options.port } : {}) });
  return { url: server.url, calls: () => server.stats().total, close: () => server.close() };
}
