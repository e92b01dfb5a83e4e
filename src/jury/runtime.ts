import type { Gateway } from '../llm/gateway.js';
import type { HealthView } from '../llm/health.js';
import type { BatchStats } from '../llm/providers/batch/index.js';
import type { JuryContext } from './judge.js';

/**
 * What a command holds while it judges: the jury's context (config, prompts, model gateway)
 * and the gateway itself, closed when done. src/compose/runtime.ts builds it.
 */
export interface JuryRuntime {
  jury: JuryContext;
  gateway: Gateway;
  /** up / down / probing of each endpoint (the gateway's breakers), for pauses, metrics and probes */
  health: HealthView;
  /** batch mode: batches submitted / in progress / over and requests waiting, over every batched endpoint */
  batchStats?(): BatchStats;
  close(): Promise<void>;
}
