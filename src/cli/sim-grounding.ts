import type { JuryConfigInput } from '../../schemas/config.js';
import type { Impact } from '../../schemas/defect.js';
import type { Verdict } from '../../schemas/verdict.js';
import { parseConfig } from '../config/load.js';
import { openRuntime } from '../compose/runtime.js';
import { buildGoldIndex, createSimProvider, parseProfile, type ProfileFileInput } from '../sim/index.js';
import { goldOf } from '../eval/gold.js';
import type { System } from '../eval/ladder.js';
import { pairedLadder, type PairedRow } from '../eval/paired-ladder.js';
import { type PairedDelta, pairedDeltas } from '../eval/passes.js';
import { predictionFromVerdict } from '../eval/predictions.js';
import { evalConfig, judgeRecords } from '../eval/run.js';
import { DEFAULT_SCORE_OPTIONS, type ScoreOptions, scoreSystems, type SystemScore } from '../eval/score.js';
import type { LoadedBenchmark } from '../eval/types.js';
import { LADDER_JURORS, ladderConfig, passesProfile } from './sim-ladder.js';

/**
 * Grounding on the simulated ladder: the ladder's jurors invent a share of their findings (on
 * clean steps, with quotes the trace lacks; src/sim `invent_rate`), and the same records are
 * judged once per rung, with each pass on or off. Every run draws the same Phase 1 and
 * consolidation (the simulator's streams depend on the prompt, not on the config), so the rungs
 * differ only by what the passes did, and they are compared record by record.
 */
export function inventingProfile(inventRate: number): ProfileFileInput {
  const base = passesProfile();
  const models = { ...base.models };
  for (const j of LADDER_JURORS) models[j.model] = { ...models[j.model], invent_rate: inventRate };
  return { ...base, models };
}

export const GROUNDING_RUNGS: ReadonlyArray<{ name: string; config: Partial<JuryConfigInput> }> = [
  { name: 'jury, no passes', config: {} },
  { name: 'jury + grounding', config: { grounding: { policy: 'drop' } } },
  { name: 'jury + removal pass', config: { removal_pass: {} } },
  { name: 'jury + grounding + removal pass', config: { grounding: { policy: 'drop' }, removal_pass: {} } },
  { name: 'jury + evidence arbiter', config: { arbiter: {} } },
  { name: 'jury + grounding + evidence arbiter', config: { grounding: { policy: 'drop' }, arbiter: {} } },
];

export interface GroundingLadder {
  rungs: Array<{ name: string; verdicts: Verdict[]; judgeMs: number; calls: number }>;
  scores: SystemScore[];
  /** every rung against `jury, no passes` (precision, recall, Balanced F1) */
  deltas: PairedDelta[];
  /** Balanced F1 of every two rungs */
  paired: PairedRow[];
}

/** Judge `loaded` once per rung with the inventing profile, then score and pair the rungs. */
export async function simulatedGrounding(loaded: LoadedBenchmark, opts: { inventRate?: number; consolidator?: string; resamples?: number; threshold?: Impact } = {}): Promise<GroundingLadder> {
  const profile = parseProfile(inventingProfile(opts.inventRate ?? 0.2));
  const gold = buildGoldIndex(loaded.records, { mode: 'given' });
  const rungs: GroundingLadder['rungs'] = [];
  for (const rung of GROUNDING_RUNGS) {
    const provider = createSimProvider({ profile, gold, latency: 'instant' });
    const config = evalConfig(parseConfig({ ...ladderConfig(opts.consolidator), ...rung.config }));
    const runtime = await openRuntime({ config, auditLogPath: null, providerFor: () => provider });
    try {
      const t0 = performance.now();
      const judged = await judgeRecords(runtime, loaded.records, { concurrency: 32 });
      rungs.push({ name: rung.name, verdicts: judged.verdicts, judgeMs: performance.now() - t0, calls: judged.verdicts.reduce((n, v) => n + v.usage.length, 0) });
    } finally {
      await runtime.close();
    }
  }
  const score: ScoreOptions = { ...DEFAULT_SCORE_OPTIONS, threshold: opts.threshold ?? 'minor', resamples: opts.resamples ?? 10_000 };
  const golds = loaded.records.map((r) => goldOf(r, loaded.scope));
  const systems: System[] = rungs.map((r) => ({ name: r.name, kind: 'pass', predictions: new Map(r.verdicts.map((v) => [v.record_id, predictionFromVerdict(v)])), usage: new Map() }));
  return {
    rungs,
    scores: scoreSystems(loaded.benchmark, golds, systems, score),
    deltas: pairedDeltas(golds, systems[0]!, systems.slice(1), score),
    paired: pairedLadder(golds, systems, score),
  };
}
