/**
 * What the operational layer (metrics and probes) reads. It only reads: nothing in the
 * pipeline, the model layer or the jury imports src/ops, so these are the shapes it accepts,
 * and anything of that shape can be handed in.
 */
import type { EndpointState, HealthView as BreakerHealth } from '../llm/health.js';
import type { BatchStats } from '../llm/providers/batch/index.js';
import type { StageCounters } from '../pipeline/stage.js';
import type { Source } from '../pipeline/source.js';

export type { EndpointState };

/** The part of the breakers' view (src/llm/health.ts) that metrics and readiness read. */
export type HealthView = Pick<BreakerHealth, 'allDown'> & { endpoints(): Array<{ name: string; state: EndpointState }> };

/** Pause accounting of the stage counters. */
export type PauseCounters = Pick<StageCounters, 'paused_ms' | 'pauses'>;

/** Batch mode's counters over every batched endpoint (src/llm/providers/batch), read when scraped. */
export type BatchView = () => BatchStats;

/** What a running stage shows: its source, the counters it counts into, its endpoints' health. */
export interface StageView {
  source: Source;
  counters: StageCounters & Partial<PauseCounters>;
  health?: HealthView;
  /** batch mode only */
  batch?: BatchView;
}
