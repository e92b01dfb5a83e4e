/**
 * What the operational layer (metrics and probes) reads. It only reads: nothing in the
 * pipeline, the model layer or the jury imports src/ops, so these are the shapes it accepts,
 * and anything of that shape can be handed in.
 */
import type { StageCounters } from '../pipeline/stage.js';
import type { Source } from '../pipeline/source.js';

export type EndpointState = 'up' | 'down' | 'probing';

/** Endpoint health as a circuit breaker sees it. */
export interface HealthView {
  endpoints(): Array<{ name: string; state: EndpointState }>;
  /** every endpoint the jury needs is down: intake is paused, nothing can be judged */
  allDown(): boolean;
}

/** Pause accounting a stage may add to its counters (reported when present, 0 otherwise). */
export interface PauseCounters {
  paused_ms: number;
  pauses: number;
}

/** What a running stage shows: its source, the counters it counts into, its endpoints' health. */
export interface StageView {
  source: Source;
  counters: StageCounters & Partial<PauseCounters>;
  health?: HealthView;
}
