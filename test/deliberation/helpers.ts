import { readFileSync } from 'node:fs';
import type { JuryConfigInput } from '../../schemas/config.js';
import type { TraceRecord } from '../../schemas/trace.js';
import type { AuditEntry } from '../../src/llm/audit.js';
import { buildGoldIndex, parseProfile, startSimulator, type ModelEntryInput, type RunningSimulator } from '../../src/sim/index.js';
import { juryOn } from '../helpers/jury.js';

/** Juror models of the deliberation tests; the moderator is served by the `default` entry. */
export const JUROR_MODELS = ['sim-juror-a', 'sim-juror-b', 'sim-juror-c'] as const;

/** A fault-free, instant profile; `all` applies to every model, `models` to named ones. */
export function profileWith(all: ModelEntryInput = {}, models: Record<string, ModelEntryInput> = {}) {
  return parseProfile({ seed: 17, models: { default: { latency_ms: 0, ...all }, ...models } });
}

export async function withSim<T>(profile: ReturnType<typeof profileWith>, records: readonly TraceRecord[], fn: (sim: RunningSimulator) => Promise<T>): Promise<T> {
  const sim = await startSimulator({ profile, gold: buildGoldIndex(records) });
  try {
    return await fn(sim);
  } finally {
    await sim.close();
  }
}

/** Three jurors and a moderator on one simulator endpoint, deliberation mode. */
export function deliberationJury(url: string, over: Partial<JuryConfigInput> = {}, endpoint: Record<string, unknown> = {}): JuryConfigInput {
  return juryOn(url, { mode: 'deliberation', moderator: { id: 'moderator', endpoint: 'sim', model: 'sim-moderator' }, ...over }, { max_retries: 1, ...endpoint });
}

export function readAudit(path: string): AuditEntry[] {
  return readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as AuditEntry);
}
