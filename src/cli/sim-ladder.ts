import type { JuryConfigInput } from '../../schemas/config.js';
import type { Impact } from '../../schemas/defect.js';
import { parseConfig } from '../config/load.js';
import { openRuntime } from '../compose/runtime.js';
import { buildGoldIndex, createSimProvider, modelProfile, parseProfile, type ProfileFileInput } from '../sim/index.js';
import { predictedMetrics, predictLadder } from '../eval/analytic.js';
import { evaluate } from '../eval/harness.js';
import { evalConfig, judgeRecords } from '../eval/run.js';
import { DEFAULT_SCORE_OPTIONS, type ScoreOptions } from '../eval/score.js';
import type { LoadedBenchmark } from '../eval/types.js';

/**
 * A jury of simulated jurors with known per-step rates, for checking the ladder against what the
 * rates predict. Every finding cites one step (adjacent_rate 0), no severity is neutral and no
 * call fails, so the predictions of src/eval/analytic.ts are exact in expectation.
 *
 * It composes the simulator with the evaluation code, so it sits with the other composition
 * in src/cli; test/eval/ladder-sim.test.ts and `npm run bench -- eval-ladder` run it.
 */
export const LADDER_PROFILE: ProfileFileInput = {
  seed: 2026,
  models: {
    default: {
      severity_mix: { neutral: 0, minor: 0.2, major: 0.5, fatal: 0.3 },
      fp_severity_mix: { neutral: 0, minor: 0.6, major: 0.3, fatal: 0.1 },
      adjacent_rate: 0,
      latency_ms: 0,
    },
    'juror-strong': { recall: 0.7, false_positive_rate: 0.04 },
    'juror-mid': { recall: 0.55, false_positive_rate: 0.06 },
    'juror-weak': { recall: 0.45, false_positive_rate: 0.1 },
    // Careful verifier: keeps most true candidates, rejects most false ones, adds a few misses.
    'moderator-careful': { consolidator: { accept_true: 0.9, accept_false: 0.3, fill_recall: 0.25, fill_false_positive_rate: 0.005 } },
    // Credulous: keeps nearly everything the panel says.
    'moderator-lenient': { consolidator: { accept_true: 0.97, accept_false: 0.75, fill_recall: 0.1, fill_false_positive_rate: 0.002 } },
  },
};

export const LADDER_JURORS = [
  { id: 'strong', model: 'juror-strong' },
  { id: 'mid', model: 'juror-mid' },
  { id: 'weak', model: 'juror-weak' },
];

export function ladderConfig(consolidatorModel = 'moderator-careful'): JuryConfigInput {
  return {
    endpoints: { sim: { kind: 'simulator', max_concurrency: 64 } },
    jurors: LADDER_JURORS.map((j) => ({ ...j, endpoint: 'sim' })),
    consolidator: { id: 'consolidator', endpoint: 'sim', model: consolidatorModel },
    mode: 'consolidation',
    cache: { enabled: false, dir: '.cache/none' },
    prices: {
      'juror-strong': { input_per_mtok: 0.6, output_per_mtok: 2.4 },
      'juror-mid': { input_per_mtok: 0.15, output_per_mtok: 0.6 },
      'juror-weak': { input_per_mtok: 0.1, output_per_mtok: 0.4 },
      'moderator-careful': { input_per_mtok: 0.15, output_per_mtok: 0.6 },
      'moderator-lenient': { input_per_mtok: 0.15, output_per_mtok: 0.6 },
    },
  };
}

/**
 * The aggregation ladder over benchmark records with in-process instant jurors: judge, score,
 * knock out, sweep the moderator, and compare every rung with the profile's prediction.
 */
export async function simulatedLadder(loaded: LoadedBenchmark, opts: { threshold?: Impact; resamples?: number; knockout?: boolean; sweep?: boolean; score?: Partial<ScoreOptions> } = {}) {
  const profile = parseProfile(LADDER_PROFILE);
  const provider = createSimProvider({ profile, gold: buildGoldIndex(loaded.records, { mode: 'given' }), latency: 'instant' });
  const config = evalConfig(parseConfig(ladderConfig()));
  const runtime = await openRuntime({ config, auditLogPath: null, providerFor: () => provider });
  try {
    const t0 = performance.now();
    const judged = await judgeRecords(runtime, loaded.records, { concurrency: 32 });
    const judgeMs = performance.now() - t0;
    const threshold = opts.threshold ?? 'minor';
    const rates = predictLadder((model) => modelProfile(profile, model), LADDER_JURORS, 'moderator-careful', threshold);
    const { report } = await evaluate({
      loaded,
      dataPath: 'simulated ladder',
      selected: loaded.records,
      verdicts: judged.verdicts,
      runtime,
      inputs: judged.inputs,
      knockout: opts.knockout ?? true,
      moderators: opts.sweep === false ? [] : ['moderator-careful', 'moderator-lenient'].map((model) => ({ ...config.consolidator!, model })),
      prices: config.prices,
      costBaseline: 'solo strong',
      score: { ...DEFAULT_SCORE_OPTIONS, threshold, resamples: opts.resamples ?? 10_000, ...opts.score },
      concurrency: 32,
      analytic: (pos, neg) => [
        ...LADDER_JURORS.map((j) => ({ system: `solo ${j.id}`, predicted: predictedMetrics(rates.solo[j.id]!, pos, neg) })),
        { system: 'union', predicted: predictedMetrics(rates.union, pos, neg) },
        { system: 'majority', predicted: predictedMetrics(rates.majority, pos, neg) },
        { system: 'jury (consolidation)', predicted: predictedMetrics(rates.consolidation, pos, neg) },
      ],
    });
    return { report, rates, judgeMs };
  } finally {
    await runtime.close();
  }
}

/**
 * The ladder's jurors and consolidators (their false positives are the unsupported defects) with
 * a removal pass and an evidence arbiter played by the consolidator's model. The pass rates are
 * knobs, not measurements: the run shows what a pass with these rates does to the jury's
 * precision and recall, and that the ladder measures it.
 */
export const PASS_RATES = {
  removal: { keep_true: 0.99, drop_false: 0.6 },
  arbiter: { uphold_true: 0.85, reject_false: 0.7 },
} as const;

export function passesProfile(): ProfileFileInput {
  const models = { ...LADDER_PROFILE.models };
  for (const m of ['moderator-careful', 'moderator-lenient']) models[m] = { ...models[m], ...PASS_RATES };
  return { ...LADDER_PROFILE, models };
}

/** The ladder jury with both passes on; which of them the verdicts show is the ladder's business. */
export function passesConfig(consolidatorModel = 'moderator-careful'): JuryConfigInput {
  return { ...ladderConfig(consolidatorModel), removal_pass: {}, arbiter: {} };
}

/** Judge and score with both passes on: the ladder gains the consensus and each pass alone. */
export async function simulatedPasses(loaded: LoadedBenchmark, opts: { consolidator?: string; resamples?: number; threshold?: Impact } = {}) {
  const profile = parseProfile(passesProfile());
  const provider = createSimProvider({ profile, gold: buildGoldIndex(loaded.records, { mode: 'given' }), latency: 'instant' });
  const config = evalConfig(parseConfig(passesConfig(opts.consolidator)));
  const runtime = await openRuntime({ config, auditLogPath: null, providerFor: () => provider });
  try {
    const t0 = performance.now();
    const judged = await judgeRecords(runtime, loaded.records, { concurrency: 32 });
    const judgeMs = performance.now() - t0;
    const { report } = await evaluate({
      loaded,
      dataPath: 'simulated passes',
      selected: loaded.records,
      verdicts: judged.verdicts,
      runtime,
      inputs: judged.inputs,
      knockout: false,
      moderators: [],
      prices: config.prices,
      costBaseline: 'solo strong',
      score: { ...DEFAULT_SCORE_OPTIONS, threshold: opts.threshold ?? 'minor', resamples: opts.resamples ?? 10_000 },
      concurrency: 32,
    });
    return { report, judgeMs, verdicts: judged.verdicts };
  } finally {
    await runtime.close();
  }
}
