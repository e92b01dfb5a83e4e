import { openFileSource } from '../../connectors/file/index.js';
import type { EndpointConfig, JuryConfig } from '../../schemas/config.js';
import type { TraceRecord } from '../../schemas/trace.js';
import { mapSourceItem } from '../pipeline/record-mapping.js';
import { defaultProfile, InputGoldIndex, loadGoldFile, loadProfileFile, NO_GOLD, startSimulator, type GoldIndex, type RunningSimulator } from '../sim/index.js';

/**
 * The juror simulator as the CLI plugs it in: one loopback HTTP server per `kind: simulator`
 * endpoint, reached through the real openai client like any other server. Only open-jury.ts
 * loads this module, and only when the config has such an endpoint.
 */

/** Where the simulated jurors' gold labels come from. */
export interface GoldSources {
  /** --gold: a JSONL of labelled trace records */
  goldFile?: string | undefined;
  /** a local input file or folder the command reads: its labelled records are read once, now */
  input?: string | undefined;
  /** records the command judges itself (judge, eval) */
  records?: Iterable<TraceRecord> | undefined;
}

export interface Simulators {
  running: Array<{ endpoint: string; url: string; server: RunningSimulator }>;
  /** the simulator endpoints with base_url pointing at their servers */
  served: Record<string, EndpointConfig>;
  close(): Promise<void>;
}

/** Labelled records of a local input, mapped as the stage maps them (config.input.mapping). */
async function addInputRecords(index: InputGoldIndex, input: string, config: JuryConfig): Promise<void> {
  const source = await openFileSource(input);
  try {
    for await (const item of source) {
      const mapped = mapSourceItem(item, config.input.mapping);
      if (mapped.ok) index.add(mapped.record);
    }
  } finally {
    await source.close();
  }
}

/** The gold index the simulators grade against: input labels first, then the --gold file. */
export async function simulatorGold(config: JuryConfig, sources: GoldSources): Promise<GoldIndex> {
  const mode = config.segmentation.mode;
  const file = sources.goldFile ? loadGoldFile(sources.goldFile, { mode }) : NO_GOLD;
  if (!sources.input && !sources.records) return file;
  const index = new InputGoldIndex(file, mode);
  for (const r of sources.records ?? []) index.add(r);
  if (sources.input) await addInputRecords(index, sources.input, config);
  return index;
}

/** Start a server for every `kind: simulator` endpoint; all are stopped again if one fails. */
export async function startSimulators(config: JuryConfig, gold: GoldIndex): Promise<Simulators> {
  const running: Simulators['running'] = [];
  const served: Simulators['served'] = {};
  const close = async (): Promise<void> => {
    await Promise.all(running.map((s) => s.server.close()));
  };
  try {
    for (const [name, ep] of Object.entries(config.endpoints)) {
      if (ep.kind !== 'simulator') continue;
      const profile = ep.profile ? loadProfileFile(ep.profile) : defaultProfile();
      const server = await startSimulator({ profile, gold });
      running.push({ endpoint: name, url: server.url, server });
      served[name] = { ...ep, base_url: server.url };
    }
  } catch (err) {
    await close();
    throw err;
  }
  return { running, served, close };
}
