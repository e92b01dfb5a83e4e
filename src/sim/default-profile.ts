import { parseProfile, type ProfileFileInput, type SimProfile } from './profile.js';

/**
 * The built-in profile: three jurors of different strength and a consolidator, with fast but
 * non-zero latency and small fault rates, so the demo exercises retries and JSON repair
 * without slowing down. Timeouts are off: with a real client they stall until its deadline.
 */
export const DEFAULT_PROFILE_INPUT: ProfileFileInput = {
  seed: 797,
  models: {
    default: {
      recall: 0.6,
      false_positive_rate: 0.04,
      severity_mix: { neutral: 0.02, minor: 0.13, major: 0.5, fatal: 0.35 },
      fp_severity_mix: { neutral: 0.15, minor: 0.5, major: 0.3, fatal: 0.05 },
      adjacent_rate: 0.2,
      latency_ms: { median: 30, sigma: 0.4, max: 150 },
      max_concurrency: 8,
      retry_after_ms: 50,
      rate_429: 0.01,
      rate_500: 0.01,
      rate_timeout: 0,
      rate_malformed_json: 0.02,
      malformed_repairable: 0.75,
      rate_fenced_json: 0.05,
      rate_prose_json: 0.03,
      rate_schema_invalid: 0.01,
      words_per_defect: 45,
      reasoning_words: 0,
    },
    // Careful and verbose: high recall, few false alarms, returns its reasoning.
    'sim-juror-a': {
      recall: 0.75,
      false_positive_rate: 0.03,
      latency_ms: { median: 45, sigma: 0.4, max: 200 },
      words_per_defect: 55,
      reasoning_words: 60,
    },
    // Middle of the road.
    'sim-juror-b': { recall: 0.6, false_positive_rate: 0.05, latency_ms: { median: 30, sigma: 0.4, max: 150 } },
    // Fast and noisy: misses more, flags more clean steps, mostly as minor nits.
    'sim-juror-c': {
      recall: 0.45,
      false_positive_rate: 0.08,
      fp_severity_mix: { neutral: 0.25, minor: 0.55, major: 0.15, fatal: 0.05 },
      latency_ms: { median: 20, sigma: 0.5, max: 120 },
      words_per_defect: 35,
    },
    'sim-consolidator': {
      recall: 0.7,
      false_positive_rate: 0.02,
      latency_ms: { median: 60, sigma: 0.3, max: 250 },
      reasoning_words: 80,
      consolidator: { accept_true: 0.92, accept_false: 0.2, fill_recall: 0.35, fill_false_positive_rate: 0.005 },
    },
  },
};

export const DEFAULT_JUROR_MODELS = ['sim-juror-a', 'sim-juror-b', 'sim-juror-c'] as const;
export const DEFAULT_CONSOLIDATOR_MODEL = 'sim-consolidator';

export function defaultProfile(): SimProfile {
  return parseProfile(DEFAULT_PROFILE_INPUT);
}
